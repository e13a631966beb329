"""The one config schema: a typed dataclass per YAML section (plus `tier` and `data.path`).

The YAML presets in `configs/`, the `--set` CLI overrides, the cockpit's form and `docs/config.md`
are all generated from or checked against these classes. Defaults equal `configs/tier1_micro.yaml`.
Cross-field rules live in `validate.py`; this module only declares fields.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .fields import spec

# Block-pattern alphabet: one character per block, repeated cyclically to `n_blocks`.
#   S = selective-SSM mixer + MoE FFN, D = selective-SSM mixer + dense FFN.
#   Lower case (s, d) marks a block that Mixture-of-Depths may skip when `mod.enabled`.
BLOCK_ALPHABET = "SDsd"


@dataclass
class ModelConfig:
    d_model: int = spec(96, "Width of the residual stream (hidden size of every block).",
                        unit="channels", lo=16, hi=8192, step=16)
    d_state: int = spec(16, "State size N of each selective-SSM channel (Mamba's d_state).",
                        unit="states", lo=1, hi=256)
    d_conv: int = spec(4, "Kernel width of the causal depthwise convolution before the SSM scan.",
                       unit="bytes", lo=1, hi=16)
    n_blocks: int = spec(4, "Number of blocks; block_pattern is repeated to this length.",
                         unit="blocks", lo=1, hi=128)
    block_pattern: str = spec(
        "DSsS", "Block kinds, one character each, repeated to n_blocks: S = SSM + MoE FFN, "
        "D = SSM + dense FFN; lower case = block that Mixture-of-Depths may skip.",
        widget="display")
    context_len: int = spec(256, "Longest training sequence (bytes); training.seq_len and the "
                            "patch scales must fit it. Inference and the step form have no limit.",
                            unit="bytes", lo=8, hi=1 << 20)


@dataclass
class MoEConfig:
    n_routed: int = spec(8, "Routed experts per MoE FFN.", unit="experts", lo=1, hi=256)
    n_shared: int = spec(1, "Shared experts every byte passes through (DeepSeekMoE).",
                         unit="experts", lo=0, hi=16)
    top_k: int = spec(2, "Routed experts chosen per byte by the sigmoid router.", unit="experts",
                      lo=1, hi=64)
    d_ff: int = spec(128, "Hidden width of one expert FFN (dense FFNs use d_ff * (top_k + "
                     "n_shared), the active width of an MoE FFN).", unit="channels", lo=8,
                     hi=65536, step=16)
    bias_lr: float = spec(1e-3, "Step of the loss-free balancing bias: after every step "
                          "b_i += bias_lr * sign(mean load - load_i).", lo=0.0, hi=1.0,
                          step=1e-4)


@dataclass
class MoDConfig:
    enabled: bool = spec(True, "Mixture-of-Depths on the lower-case blocks of block_pattern.")
    capacity: float = spec(0.5, "Fraction of bytes a routed block processes per sequence in "
                           "training (top-capacity routing).", unit="fraction", lo=0.05, hi=1.0,
                           widget="slider", step=0.05)
    gate_kind: str = spec("scalar", "Router of a MoD block: scalar = one linear score per byte; "
                          "at inference a byte is processed when its score is above 0 (causal), "
                          "a rule trained with an auxiliary loss.", choices=("scalar",))


@dataclass
class EarlyExitConfig:
    enabled: bool = spec(True, "Exit heads after the listed blocks (trained jointly; used to "
                         "skip later blocks at inference when confident).")
    blocks: list[int] = spec([1], "Block indices (0-based) followed by an exit head, e.g. 4 or "
                             "4,7.", unit="block index", lo=0, hi=127)
    exit_threshold: float = spec(0.9, "Confidence (p_top1 - p_top2) at or above which a byte "
                                 "leaves at an exit head (later blocks keep their state); "
                                 "evaluation simulates the same rule.", unit="probability",
                                 lo=0.0, hi=1.0, step=0.01)
    exit_loss_weight: float = spec(0.3, "Weight of each exit head's cross-entropy in the loss.",
                                   lo=0.0, hi=10.0, step=0.05)


@dataclass
class CascadeConfig:
    enabled: bool = spec(True, "Cheap order-1..3 byte-context predictor beside the model, mixed "
                         "with it by a small learned mixer.")
    threshold: float = spec(0.95, "Max probability of the cascade-alone distribution at or above "
                            "which the cascade codes the byte alone (the big model does not run).",
                            unit="probability", lo=0.0, hi=1.0, step=0.01)
    d_hidden: int = spec(32, "Hidden width of the mixer that blends cascade and model "
                         "distributions.", unit="channels", lo=4, hi=4096)


@dataclass
class ConditioningConfig:
    ada_ln_zero: bool = spec(True, "AdaLN-Zero modulation of the listed blocks by the global "
                             "vector (zero-initialised: blocks start as the identity).")
    ada_ln_blocks: list[int] = spec([0, 1], "Block indices (0-based) that receive AdaLN-Zero "
                                    "modulation, e.g. 0,1.", unit="block index", lo=0, hi=127)
    cross_attn: bool = spec(False, "Every block also attends to the head.d_globals global tokens.")


@dataclass
class PatchesConfig:
    primary: int = spec(2, "Bytes predicted per position: the next-byte head plus primary-1 "
                        "multi-token heads when multi_token_predict is on.", unit="bytes", lo=1,
                        hi=64)
    scales: list[int] = spec([4, 16], "Causal patch sizes whose pooled embeddings (of the last "
                             "complete patch) are added to each byte's input, e.g. 16 or 4,16,64.",
                             unit="bytes", lo=1, hi=1 << 16)
    multi_token_predict: bool = spec(True, "Train extra heads that predict bytes t+2 .. "
                                     "t+primary (coding still uses the next-byte head).")
    mtp_weight: float = spec(0.5, "Geometric decay across multi-token heads: MTP = sum_k w^k CE_k "
                             "/ sum_k w^k, head k predicting byte t+1+k.",
                             lo=0.0, hi=1.0, step=0.05)


@dataclass
class HeadConfig:
    d_globals: int = spec(8, "Size of the global conditioning vector (computed from values the "
                          "compressed file's header stores, so the decoder knows it).",
                          unit="values", lo=0, hi=256)
    n_early_exit_heads: int = spec(1, "Number of early-exit heads; must equal the number of "
                                   "early_exit.blocks (a consistency check: the heads are built "
                                   "from that list).", unit="heads", lo=0, hi=64)


@dataclass
class TrainingConfig:
    steps: int = spec(2000, "Optimizer steps of the run.", unit="steps", lo=1, hi=10**9)
    batch_size: int = spec(16, "Sequences per step (per process with several GPUs).",
                           unit="sequences", lo=1, hi=65536)
    seq_len: int = spec(256, "Bytes per training sequence (at most model.context_len).",
                        unit="bytes", lo=8, hi=1 << 20)
    grad_clip: float = spec(1.0, "Clip the global gradient norm to this value (0 = off).",
                            lo=0.0, hi=1e6, step=0.1)
    warmup_steps: int = spec(100, "Linear learning-rate warmup from 0.", unit="steps", lo=0,
                             hi=10**9)
    cosine_schedule: bool = spec(True, "Cosine decay to 10% of the peak after warmup (off: "
                                 "constant after warmup).")
    precision: str = spec("fp32", "Numeric precision of training: fp32; bf16 autocast where the "
                          "device supports it; bf16+fp8 matmuls only on GPUs that run them.",
                          choices=("fp32", "bf16", "bf16+fp8"))


@dataclass
class MuonConfig:
    lr: float = spec(0.02, "Muon learning rate for 2-D hidden weight matrices.", lo=0.0, hi=1.0,
                     step=1e-3)
    momentum: float = spec(0.95, "Nesterov momentum of Muon.", lo=0.0, hi=0.9999, step=0.01)
    ns_steps: int = spec(5, "Newton-Schulz iterations that orthogonalise each update.",
                         unit="iterations", lo=1, hi=20)


@dataclass
class AdamWConfig:
    lr: float = spec(3e-3, "AdamW learning rate for embeddings, heads, norms, biases and SSM "
                     "parameters.", lo=0.0, hi=1.0, step=1e-4)
    betas: tuple[float, float] = spec((0.9, 0.95), "AdamW (beta1, beta2), e.g. 0.9,0.95.",
                                      lo=0.0, hi=0.99999)
    weight_decay: float = spec(0.1, "Decoupled weight decay (not applied to norms, biases, "
                               "A_log, D).", lo=0.0, hi=10.0, step=0.01)


@dataclass
class OptimizerConfig:
    muon: MuonConfig = field(default_factory=MuonConfig)
    adamw: AdamWConfig = field(default_factory=AdamWConfig)


@dataclass
class LossConfig:
    ce_weight: float = spec(1.0, "Weight of the next-byte cross-entropy in the loss.", lo=0.0,
                            hi=100.0, step=0.1)
    mtp_weight: float = spec(0.3, "Weight of the multi-token-prediction term: loss = "
                             "ce_weight*CE_next + mtp_weight*MTP.", lo=0.0, hi=100.0, step=0.05)


@dataclass
class DataConfig:
    path: str = spec("data/default", "Dataset folder made by bin.prepare_data (train.bin, "
                     "val.bin, dataset.json).")
    pack_documents: bool = spec(True, "Pack documents back to back into sequences (off: each "
                                "sequence starts at a document start, padded).")
    seed: int = spec(1234, "Seed of the data order; the order is a pure function of (seed, step).",
                     lo=0, hi=2**31 - 1)


@dataclass
class LoRAConfig:
    enabled: bool = spec(False, "Online LoRA adaptation while compressing (encoder and decoder "
                         "take identical updates on already-coded bytes).")
    rank: int = spec(4, "Rank r of each adapter (its update B A has r inner columns).", lo=1,
                     hi=256)
    alpha: float = spec(8.0, "LoRA scale numerator: the update is (alpha / rank) * B A.",
                        lo=0.0, hi=1024.0)
    target: str = spec("routed", "Weights that get adapters: routed = routed-expert FFNs, all = "
                       "every matrix inside the blocks (mixer projections, FFN/expert matrices, "
                       "cross-attention).", choices=("routed", "all"))
    trigger_bytes: int = spec(65536, "Bytes coded between two adaptation rounds.",
                              unit="bytes", lo=1, hi=1 << 40)
    adapt_steps: int = spec(1, "Gradient steps per adaptation round.", unit="steps", lo=1,
                            hi=1000)
    adapt_lr: float = spec(1e-3, "Learning rate of the adaptation steps.", lo=0.0, hi=1.0,
                           step=1e-4)


@dataclass
class EntropyConfig:
    coder: str = spec("rans", "Entropy coder: rans (range asymmetric numeral system) or tans "
                      "(table ANS).", choices=("rans", "tans"))
    block_size: int = spec(65536, "Bytes per container block (each block has its own length "
                           "and CRC and restarts the coder).", unit="bytes", lo=256,
                           hi=1 << 30)
    precision: int = spec(32, "Coder state width; caps prob_precision at precision/2 and sets "
                          "the flush cost per stream per block (precision/8 bytes).",
                          unit="bits", choices=(32, 64), widget="number")
    prob_precision: int = spec(16, "log2 of the integer frequency total M every distribution "
                               "is quantised to (each byte keeps frequency >= 1).", unit="bits",
                               lo=10, hi=24)
    probability_sharpening: bool = spec(False, "Let the encoder pick a per-block exponent alpha "
                                        "(q ~ p**alpha) by measured cost and store it in the "
                                        "header.")
    match_min_len: int = spec(5, "Match model: predict the byte that followed the last earlier "
                              "occurrence of the last this-many bytes (any stream), trusted as "
                              "far as its counted hits say; 0 = off. Helps most on text that "
                              "repeats itself (code, markup).", unit="bytes", lo=0, hi=32)


@dataclass
class LoggingConfig:
    log_every: int = spec(10, "Steps between metric rows (losses, lr, routing, MoD).",
                          unit="steps", lo=1, hi=10**6)
    eval_every: int = spec(200, "Steps between validation, activation stats and hidden-state "
                           "snapshots.", unit="steps", lo=1, hi=10**7)
    save_every: int = spec(500, "Steps between checkpoints.", unit="steps", lo=1, hi=10**7)


@dataclass
class HardwareConfig:
    gpus: int = spec(0, "GPUs to train on: 0 = CPU, 1 = one GPU, >1 = torchrun with DDP.",
                     unit="GPUs", lo=0, hi=64)
    compile: bool = spec(False, "torch.compile the model for training (faster where it works; "
                         "never used by the codec, whose numerics must stay fixed).")
    threads: int = spec(0, "CPU threads per training process: 0 = chosen from the machine's "
                        "load and re-chosen every few seconds (a busy core costs one thread); "
                        "N = exactly N, as OMP_NUM_THREADS does (then the numbers of a run do "
                        "not depend on the load).", unit="threads", lo=0, hi=512)


@dataclass
class Config:
    """A whole u-moec-tiny configuration (one YAML file)."""

    tier: str = spec("tier1_micro", "Name of the preset this config started from.")
    model: ModelConfig = field(default_factory=ModelConfig)
    moe: MoEConfig = field(default_factory=MoEConfig)
    mod: MoDConfig = field(default_factory=MoDConfig)
    early_exit: EarlyExitConfig = field(default_factory=EarlyExitConfig)
    cascade: CascadeConfig = field(default_factory=CascadeConfig)
    conditioning: ConditioningConfig = field(default_factory=ConditioningConfig)
    patches: PatchesConfig = field(default_factory=PatchesConfig)
    head: HeadConfig = field(default_factory=HeadConfig)
    training: TrainingConfig = field(default_factory=TrainingConfig)
    optimizer: OptimizerConfig = field(default_factory=OptimizerConfig)
    loss: LossConfig = field(default_factory=LossConfig)
    data: DataConfig = field(default_factory=DataConfig)
    lora: LoRAConfig = field(default_factory=LoRAConfig)
    entropy: EntropyConfig = field(default_factory=EntropyConfig)
    logging: LoggingConfig = field(default_factory=LoggingConfig)
    hardware: HardwareConfig = field(default_factory=HardwareConfig)


# Section titles in the order the cockpit's accordion and the docs show them.
SECTION_TITLES = {
    "model": "Model", "moe": "MoE", "mod": "MoD", "early_exit": "Early Exit",
    "cascade": "Cascade", "conditioning": "Conditioning", "patches": "Patches", "head": "Head",
    "training": "Training", "optimizer.muon": "Optimizer Muon", "optimizer.adamw": "Optimizer AdamW",
    "loss": "Loss", "data": "Data", "lora": "LoRA", "entropy": "Entropy", "logging": "Logging",
    "hardware": "Hardware",
}
