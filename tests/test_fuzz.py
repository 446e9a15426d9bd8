"""Fuzz: hostile instances, solutions and envelopes of every kind keep the README's promise.

Each example is a case of :mod:`fabricopt.bench.hostile.mutations` — a valid file of one kind
with one thing broken — run by :func:`fabricopt.bench.hostile.probe.probe` through
``fabricopt solve`` / ``fabricopt check`` and the API. It must exit 0, 1 or 2 with no
traceback and at most one short stderr line; exit 2 exactly when the API raises a
``FabricError``; and every accepted instance must solve with a fast method to a finite
objective that ``check`` accepts. The default run tries 8x the profile's examples per
kind (320 under ``ci``, derandomized; 4,000 under ``thorough``); the ``slow`` test tries
3,000 per kind. The alarm only catches hangs: no assertion depends on machine speed.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricopt.problems import kinds
from fabricopt.bench.hostile.mutations import FAMILIES, TARGETS, mutate
from fabricopt.bench.hostile.probe import probe

from cli_helpers import run_in_process

EXAMPLES = 8 * settings.default.max_examples
HANG_S = 60.0

_cases = dict(target=st.sampled_from(TARGETS), family=st.sampled_from(FAMILIES),
              seed=st.integers(0, 2 ** 20))


def _assert_promises_kept(kind, target, family, seed):
    outcome = probe(mutate(kind, target, family, seed), HANG_S, run_cli=run_in_process)
    assert not outcome.failures, outcome.summary()


@pytest.mark.parametrize("kind", kinds())
@settings(max_examples=EXAMPLES)
@given(**_cases)
def test_hostile_input_gets_one_line_or_a_finite_checked_answer(kind, target, family, seed):
    _assert_promises_kept(kind, target, family, seed)


@pytest.mark.slow
@pytest.mark.parametrize("kind", kinds())
@settings(max_examples=3000)
@given(**_cases)
def test_hostile_input_thousands(kind, target, family, seed):
    _assert_promises_kept(kind, target, family, seed)


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_mutates_every_kind_and_target(family):
    for kind in kinds():
        for target in TARGETS:
            a, b = (mutate(kind, target, family, seed) for seed in (0, 0))
            assert a == b and a.family == family and a.description


def test_the_probe_catches_a_broken_promise(monkeypatch):
    # A probe that cannot fail proves nothing: break read_json and watch it notice.
    def broken(source):
        raise RuntimeError("boom")

    monkeypatch.setattr("fabricopt.io.read_json", broken)
    outcome = probe(mutate("circuits", "instance", "missing", 0), HANG_S, run_cli=run_in_process)
    assert outcome.traceback and any("RuntimeError" in f for f in outcome.failures)


def test_the_probe_catches_a_raw_control_character():
    # a command that echoes a name raw: the probe must say so
    def echoes_raw(argv, timeout_s):
        return 2, "", "fabricopt: error: ops['\x1b[2Jx\u202e'].id: unknown op id\n"

    case = mutate("placement", "instance", "control_chars", 4)
    outcome = probe(case, HANG_S, run_cli=echoes_raw)
    assert outcome.raw_control and "cli: raw U+001B, U+202E printed" in outcome.failures
    assert not probe(case, HANG_S, run_cli=run_in_process).failures


@pytest.mark.parametrize("special", ["fifo", "dev-zero", "dev-urandom", "folder"])
def test_a_special_file_is_one_line_not_a_hang(special):
    case = next(c for seed in range(100)
                for c in [mutate("circuits", "instance", "special_file", seed)]
                if c.special == special)
    outcome = probe(case, HANG_S, run_cli=run_in_process)
    assert outcome.clean_error and not outcome.hang, outcome.summary()
