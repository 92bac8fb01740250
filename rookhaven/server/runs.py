"""The run board: verification and re-ranking runs started over MCP, each worked on a thread
while ``get_run`` watches it, and the client that started it told when it starts and ends.

The board lives as long as the server's lifespan (its task group is the lifespan's). A run
the board no longer holds (or that another process started) is read from the store.
"""

from __future__ import annotations

import logging
import time

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup
from mcp.server.session import ServerSession

from ..errors import RookhavenError
from .notify import tell
from .outputs import RunOutput
from .ports import PreparedRun

log = logging.getLogger(__name__)

KEEP = 100  # finished runs remembered here; older ones are read back from the store


class RunBoard:
    """Runs started in this server, by id."""

    def __init__(self, tasks: TaskGroup) -> None:
        self._tasks = tasks
        self._runs: dict[str, RunOutput] = {}

    def get(self, run_id: str) -> RunOutput | None:
        """The run as this server last saw it, or None if it did not start it."""
        return self._runs.get(run_id)

    def ids(self) -> list[str]:
        return list(self._runs)

    def start(self, prepared: PreparedRun, session: ServerSession | None) -> RunOutput:
        """Start ``prepared`` in the background (unless the same run is already going) and
        return it as it stands."""
        current = self._runs.get(prepared.run_id)
        if current is not None and current.state == "running":
            return current
        self._forget_old()
        run = RunOutput(run_id=prepared.run_id, kind=prepared.kind, state="running", done=0,
                        mode=prepared.mode, started_at=time.time(),
                        asked_by=[prepared.asked_by] if prepared.asked_by else [])
        self._runs[prepared.run_id] = run
        self._tasks.start_soon(self._work, prepared, session, run)
        return run

    def _forget_old(self) -> None:
        finished = [i for i, r in self._runs.items() if r.state != "running"]
        for run_id in finished[: max(0, len(self._runs) - KEEP + 1)]:
            del self._runs[run_id]

    def _progress(self, run_id: str, done: int, total: int) -> None:
        # Called on the run's thread; replacing the entry is one atomic dict store.
        self._runs[run_id] = self._runs[run_id].model_copy(update={"done": done, "total": total})

    async def _work(self, prepared: PreparedRun, session: ServerSession | None,
                    run: RunOutput) -> None:
        event = {"run_id": run.run_id, "kind": run.kind, "mode": run.mode}
        if session is not None:
            await tell(session, "info", {"event": "run started", **event})
        try:
            finished = await anyio.to_thread.run_sync(
                prepared.work, lambda d, t: self._progress(run.run_id, d, t),
                abandon_on_cancel=True)
        except RookhavenError as exc:
            self._runs[run.run_id] = self._runs[run.run_id].model_copy(update={
                "state": "failed", "error": str(exc), "finished_at": time.time()})
            if session is not None:
                await tell(session, "error", {"event": "run failed", **event,
                                              "error": str(exc)})
            return
        except Exception:
            log.exception("run %s failed", run.run_id, extra={"run": run.run_id})
            self._runs[run.run_id] = self._runs[run.run_id].model_copy(update={
                "state": "failed", "finished_at": time.time(),
                "error": "the run stopped on an internal error; the server's log has it"})
            if session is not None:
                await tell(session, "error", {"event": "run failed", **event})
            return
        done = finished.model_copy(update={"started_at": run.started_at, "mode": run.mode,
                                           "finished_at": time.time()})
        self._runs[run.run_id] = done
        alarms = done.verification.alarms if done.verification else 0
        if session is not None:
            await tell(session, "warning" if alarms else "info", {
                "event": "run finished", **event, "done": done.done, "alarms": alarms,
                "report": done.report})
