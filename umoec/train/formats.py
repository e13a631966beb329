"""The names written into checkpoint files, in a module without torch: the simulator (torch-free
until it writes) and the checkpoint reader both use them."""

FORMAT = "u-moec-tiny checkpoint v1"
SIM_FORMAT = "u-moec-tiny simulated checkpoint v1"
