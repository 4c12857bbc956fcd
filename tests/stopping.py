"""Stop pressed in the middle of a live panel's run, on every machine (importable from every
test module as ``stopping``, like ``seeds``).

:func:`stop_mid_run` starts a panel the way its Run button does and holds the run at its first
progress report strictly between 0 and 1 until Stop has been pressed: the press lands mid-run
however fast or slow the machine is, with no seconds waited and no polling."""
from __future__ import annotations

import threading

BOUND_S = 600  # a hung run fails the test after this long; no test waits for it to pass


def stop_mid_run(panel) -> float:
    """Start ``panel`` in the Run button's thread, press Stop at its first progress between 0
    and 1 (the run waits for the press there), and wait for the run to end. Returns the
    progress at the press. A run that ends without such a report fails, saying how it ended."""
    reached, pressed, woke = threading.Event(), threading.Event(), threading.Event()

    def on_progress(change):
        if 0 < change["new"] < 1 and not reached.is_set():
            reached.set()
            woke.set()
            pressed.wait(BOUND_S)  # in the run's thread: it goes on once Stop was pressed

    def on_button(change):
        if not change["new"]:  # Run enabled again: the run is over (and never reached)
            woke.set()

    panel.progress.observe(on_progress, names="value")
    panel.button.observe(on_button, names="disabled")
    try:
        panel.start()
        woke.wait(BOUND_S)
        assert reached.is_set(), f"the run reported no progress between 0 and 1: {panel.status.value!r}"
        at = panel.progress.value
        assert panel.running
        panel.stop()
        pressed.set()
        panel._thread.join(BOUND_S)
        assert not panel.running, "the run went on after Stop"
        return at
    finally:
        pressed.set()
        panel.progress.unobserve(on_progress, names="value")
        panel.button.unobserve(on_button, names="disabled")
