"""The cockpit's one cache: a thread-safe LRU of values keyed by name and checked by a signature
(what the value was built from: a file's size and mtime, ...). A signature miss rebuilds, and the
builder gets the stale value to extend (the Compare tab appends a live run's new rows). Builds run
outside the lock: racing misses both build, the later is kept. No Dash here.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any


class SignatureCache:
    def __init__(self, size: int = 16):
        if size < 1:
            raise ValueError("a cache holds at least one value")
        self.size = size
        self._lock = threading.Lock()
        self._items: OrderedDict[Hashable, tuple[Any, Any]] = OrderedDict()

    def get(self, key: Hashable, sig: Any, build: Callable[[Any | None], Any]) -> Any:
        """The value cached for `key` if its signature is `sig`, else build(stale value or None)."""
        with self._lock:
            hit = self._items.get(key)
            if hit is not None and hit[0] == sig:
                self._items.move_to_end(key)
                return hit[1]
        value = build(hit[1] if hit is not None else None)
        with self._lock:
            self._items[key] = (sig, value)
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)
