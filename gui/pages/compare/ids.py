"""The Compare tab's own component ids (the shared ones are in gui/ids.py)."""
COMPARE_RUNS = "compare-runs"                    # multi-select: 2-8 runs, ours and Forge's
COMPARE_AXIS = "compare-axis"                    # step | bytes | time
COMPARE_SMOOTHING = "compare-smoothing"
COMPARE_LOGY = "compare-logy"
COMPARE_FOLLOW = "compare-follow"                # follow live: autorange x on every refresh
COMPARE_GRAPH = "compare-graph"
COMPARE_MESSAGE = "compare-message"
COMPARE_TABLE = "compare-table"
COMPARE_CSV_BTN = "compare-csv-btn"
COMPARE_CSV = "compare-csv-download"
COMPARE_STATE = "compare-state"                  # memory: data signature and zoom window
COMPARE_SYSTEM_GRAPH = "compare-system-graph"    # one system metric of every picked run
COMPARE_SYSTEM_METRIC = "compare-system-metric"  # cpu_percent | rss_bytes | gpu_util | ...
COMPARE_SYSTEM_NOTE = "compare-system-note"      # the runs the System chart leaves out, and why
COMPARE_SYSTEM_STATE = "compare-system-state"    # memory: what the System chart last drew
COMPARE_ZOOM = "compare-zoom"                          # memory: the compare chart's held x range
