"""What a cockpit is made of, built once in `create_app` and handed to every page's `register`:
`CockpitSettings` (typed settings from the command line or a test) and `AppContext` (the services
built from them). No Dash here. Code inside a request without the app reaches it by `current()`.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flask import current_app, has_app_context

from .services.compress_jobs import JobManager, JobRunner
from .services.datasets import DatasetBuilder
from .services.forge import OPENED_FILE, ForgeRegistry
from .services.generation import Generation
from .services.launcher import Launcher
from .services.supervisor import Supervisor
from .services.watchdog import RunWatchdog

EXTENSION = "umoec"   # the key in the Flask app's `extensions` dict


@dataclass(frozen=True)
class CockpitSettings:
    runs_dir: Path
    data_dir: Path                # the Datasets tab's folder
    presets_dir: Path             # user presets (default <runs-dir>/../presets)
    upload_dir: Path              # Compression / Evaluation tabs: the upload sandbox, its size
    max_upload_mb: float          # limit, and the job time limit
    job_timeout_s: float
    stop_timeout_s: float
    refresh_ms: int

    @property
    def max_upload_bytes(self) -> int:
        return int(self.max_upload_mb * 1_000_000)


@dataclass
class AppContext:
    settings: CockpitSettings
    supervisor: Supervisor        # the one spawn/watch/reap/time-limit/cancel of every child
    launcher: Launcher            # training runs started or resumed here
    watchdog: RunWatchdog         # every run's honest state, from a server thread
    forge: ForgeRegistry          # Forge folders opened by path
    datasets: DatasetBuilder      # prepare_data builds
    jobs: JobManager              # compression, verification, evaluation and export jobs
    generation: Generation        # the Generate tab's sampling and scoring jobs

    @classmethod
    def build(cls, settings: CockpitSettings) -> AppContext:
        """The services of one cockpit; jobs a previous cockpit left behind are reconciled."""
        supervisor = Supervisor()
        launcher = Launcher(settings.runs_dir, stop_timeout=settings.stop_timeout_s, supervisor=supervisor)
        jobs = JobManager(settings.runs_dir, timeout=settings.job_timeout_s,
                          runner=JobRunner(supervisor=supervisor))
        jobs.reconcile()
        return cls(settings=settings, supervisor=supervisor, launcher=launcher,
                   watchdog=RunWatchdog(settings.runs_dir, launcher),
                   forge=ForgeRegistry(settings.runs_dir / OPENED_FILE),
                   datasets=DatasetBuilder(settings.data_dir, supervisor=supervisor), jobs=jobs,
                   generation=Generation(supervisor))


def of(app: Any) -> AppContext:
    """The context of a Dash app (or its Flask server)."""
    server = getattr(app, "server", app)
    return server.extensions[EXTENSION]


def current() -> AppContext | None:
    """The serving cockpit's context inside a request, else None."""
    return current_app.extensions.get(EXTENSION) if has_app_context() else None
