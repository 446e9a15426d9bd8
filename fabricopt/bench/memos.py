"""The package's memos of answers, and emptying them between timed calls.

fabricopt keeps a few recent answers where a search asks the same question many times
(matchings, allocations, balanced graphs, SiP-Ring solves). Timing a call twice would
time the second call's memo hits, so the speed experiment empties them before each
timed call (:func:`forget_answers`). ``tests/bench/test_memos.py`` fails when a memo
appears in the package that is neither emptied here nor listed as holding no answers.
"""

from __future__ import annotations

__all__ = ["forget_answers", "ANSWER_MEMOS", "CONSTANT_MEMO_MODULES"]

#: Every memo of answers: ``module: names`` (an OrderedDict, or an ``lru_cache``'d
#: function).
ANSWER_MEMOS = {
    "fabricopt.algorithms._matching": ("_max_weight_matching",),
    "fabricopt.fabrics.iteration": ("_traffics", "_balanced_graphs", "_op_graphs",
                                    "_plan_parts_seen", "_allocations"),
    "fabricopt.fabrics.models": ("_ring_instances", "_ring_results"),
}

#: Modules whose memos hold what never depends on a call's input (versions, schemas,
#: tables read from the package, the harness's own warm-up): kept.
CONSTANT_MEMO_MODULES = frozenset({
    "fabricopt.milp.highs", "fabricopt.schemas", "fabricopt.fabrics.simai.efficiency",
    "fabricopt.bench.warm", "fabricopt.bench.isolate", "fabricopt.bench.hostile.mutations",
})


def forget_answers() -> None:
    """Empty every memo of :data:`ANSWER_MEMOS` (of the modules already imported: the
    others hold nothing yet)."""
    import sys

    for module_name, names in ANSWER_MEMOS.items():
        module = sys.modules.get(module_name)
        if module is None:
            continue
        for name in names:
            memo = getattr(module, name)
            (memo.cache_clear if hasattr(memo, "cache_clear") else memo.clear)()
