"""The claims rows not yet moved onto the claims engine (issue 38), by theme.

A claims row made without the engine's numbers (``evidence``: :func:`dynamics.evidence.judge`)
must start with one of these statements' openings, or :func:`dynamics.evidence.audit` refuses
it. The list only shrinks: ``tests/test_claims_engine.py`` holds each entry to a statement
still written in its theme's code, so the entry of a row moved onto the engine must go with it.
"""
NOT_YET_JUDGED: dict[str, tuple[str, ...]] = {
    'lottery': (
        'Fine-tuning updates a small subnetwork (5–30% of',
        'The updates are sparse but nearly full rank',
        'Tickets learn faster (earlier early-stopping step)',
        'At a larger learning rate, the pruned architect',
        'Rewinding to an early step finds better tickets',
    ),
    'spectral': (
        'Newton–Schulz (matrix products, bfloat16) is muc',
        'Muon trains faster than AdamW: the NanoGPT (GPT-',
        'Muon trains faster than SGD with Nesterov moment',
        'Per step Muon reaches the target in under half o',
        'The float32 teaching Muon reaches the target wit',
        'On a CPU, five Newton–Schulz steps are less than',
    ),
    'weight_decay': (
        'power-law tails in the weight spectrum come with',
    ),
}
