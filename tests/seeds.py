"""The seeds a chapter's claim tests run on: 0, 1, 2 by default (what CI asserts), or the
comma-separated list in ``$DYNAMICS_CLAIM_SEEDS``, so that the claims can be tried on other
seeds and, with ``ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE``, with another CPU's
floating-point rounding (README, "Claims on other seeds and other CPUs")."""
import os


def claim_seeds(default=(0, 1, 2)) -> list[int]:
    raw = os.environ.get("DYNAMICS_CLAIM_SEEDS", "").strip()
    if not raw:
        return list(default)
    try:
        seeds = [int(s) for s in raw.split(",") if s.strip()]
    except ValueError:
        raise ValueError(f"DYNAMICS_CLAIM_SEEDS={raw!r}: give comma-separated integers, "
                         "e.g. 3,4,5") from None
    if not seeds or min(seeds) < 0:
        raise ValueError(f"DYNAMICS_CLAIM_SEEDS={raw!r}: give one or more seeds >= 0")
    return seeds


SEEDS = claim_seeds()
