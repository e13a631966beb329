"""The notifications' and watchdog's own component ids (spec strings unchanged; the ids other parts
share are in gui/ids.py)."""
NOTIFY_SEEN = "notify-seen"                      # localStorage: last states seen (no repeat toasts)
NOTIFY_EVENTS = "notify-events"                  # the latest tick's events (desktop notifications)
NOTIFY_TOASTS = "notify-toasts"
NOTIFY_ENABLE = "notify-enable-btn"              # asks the browser's permission (a user click)
NOTIFY_PERMISSION = "notify-permission"
NOTIFY_SHOWN = "notify-shown"
