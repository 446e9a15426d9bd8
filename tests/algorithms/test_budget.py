"""The work budget of the placement searches (fabricopt.algorithms._budget)."""

from fabricopt.algorithms._budget import Budget


def test_a_budget_is_spent_by_work_or_by_its_deadline_and_says_which():
    b = Budget(3)
    assert not b.spent() and b.stopped_by() == "none"
    b.used += 3
    assert b.spent() and b.stopped_by() == "work"
    late = Budget(deadline=0.0)      # a perf_counter value long past
    assert late.spent() and late.stopped_by() == "time"
    assert Budget.within(10, None).deadline is None
    assert not Budget.within(10, 3600.0).spent()
