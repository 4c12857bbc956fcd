"""The book's operations: running its experiments at scale and measuring what they cost.

It imports the reader's library (``dynamics``); the library never imports it.

- ``precompute``: runs a chapter's declared units (:class:`dynamics.units.Plan`) into
  ``data/*.json``, resumably (``python -m dynamics_ops.precompute <chapter> --profile P``)
- ``bench`` (speed as ratios measured in one run; each notebook's time), ``gpumeasure`` (each
  notebook at the gpu profile on a real GPU)
- ``standin`` (a CUDA device on the CPU that refuses what CUDA refuses: ``DYNAMICS_DEVICE=standin``,
  registered with the library as a ``dynamics.devices`` entry point), ``precision`` (TF32's
  rounding emulated on the CPU)
"""
