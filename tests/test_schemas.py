"""The shipped JSON Schemas agree with the validators of fabricopt.problems.

Every generated instance and every method's solution and envelope validate; every
structural error that ``fabricopt.testing.invalid_instances`` makes (a wrong type, a
missing or unknown field, a constant range) is rejected by the schema too; the fields
of each schema are the fields of its dataclass; the files are the builder's output.
"""

import dataclasses
import re

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

jsonschema = pytest.importorskip("jsonschema")

import fabricopt  # noqa: E402
from fabricopt.problems import get_kind, instance_from_dict, kinds  # noqa: E402
from fabricopt.schemas import schema, schema_path  # noqa: E402
from fabricopt.schemas._build import build_all, render  # noqa: E402
from fabricopt.methods import Result, all_methods  # noqa: E402
from fabricopt.testing import instances, invalid_instances  # noqa: E402

KINDS = kinds()
FEW = settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))


def validator(kind, which="instance"):
    return jsonschema.Draft202012Validator(schema(kind, which))


def test_the_six_kinds_have_schemas():
    assert set(KINDS) == {"placement", "circuits", "wavelengths", "topology", "priorities",
                          "crux"}


@pytest.mark.parametrize("name", sorted(build_all()))
def test_shipped_files_are_the_builders_output_and_valid_schemas(name):
    shipped = (schema_path("circuits").parent / name).read_text()
    assert shipped == render(build_all()[name]), \
        f"{name} is stale: run python -m fabricopt.schemas._build"
    jsonschema.Draft202012Validator.check_schema(build_all()[name])


def _fields(cls):
    return {f.name for f in dataclasses.fields(cls)}


@pytest.mark.parametrize("kind", KINDS)
def test_schema_fields_are_the_dataclass_fields(kind):
    k = get_kind(kind)
    assert set(schema(kind)["properties"]) == {"problem"} | _fields(k.instance_type)
    assert set(schema(kind, "solution")["properties"]) == _fields(k.solution_type)
    assert set(schema(kind, "result")["properties"]) == _fields(Result)


@pytest.mark.parametrize("kind", KINDS)
def test_required_fields_are_the_ones_the_validator_requires(kind):
    data = fabricopt.generate(kind, seed=1).to_dict()
    required = set(schema(kind)["required"])
    for key in data:
        trimmed = {k: v for k, v in data.items() if k != key}
        try:
            instance_from_dict(trimmed)
            missing = False
        except fabricopt.InvalidInstance as exc:
            missing = str(exc) == f"{key}: missing required field"
        assert missing == (key in required), key
        assert validator(kind).is_valid(trimmed) == (key not in required), key


@pytest.mark.parametrize("kind", KINDS)
@FEW
@given(data=st.data())
def test_generated_instances_validate(kind, data):
    inst = data.draw(instances(kind))
    errors = [e.message for e in validator(kind).iter_errors(inst.to_dict())]
    assert not errors


@pytest.mark.parametrize("kind", KINDS)
def test_default_generator_instances_validate(kind):
    validator(kind).validate(fabricopt.generate(kind, seed=0).to_dict())


METHODS = [(k, m.name) for k in KINDS for m in all_methods(k)]


@pytest.mark.parametrize("kind,method", METHODS)
@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_methods_solution_and_envelope_validate(kind, method, data):
    inst = data.draw(instances(kind, max_size=4))
    result = fabricopt.solve(inst, method, time_limit=10)
    envelope = result.to_dict()
    validator(kind, "result").validate(envelope)
    if result.solution is not None:
        validator(kind, "solution").validate(envelope["solution"])


# The rules a JSON Schema states: types, fields, constant ranges and list lengths.
# Everything else (square matrices, known ids, cycles, finiteness, which JSON cannot
# even carry) is the validators' alone.
STRUCTURAL = re.compile(
    r": (missing required field|unknown field.*|must be an integer|must be a number"
    r"|must be a non-empty string|must be a list|must be an object.*|must be >= \S+"
    r"|must be > 0|must be <= \S+|must have at least one row|must list at least one.*"
    r"|must be 'cw' or 'ccw'|needs at least \d+ servers|repeats server \d+"
    r"|a path must name at least one link|the path uses this link twice)$"
    r"|unknown problem kind")
# Ranges whose bound depends on another field.
CROSS_FIELD = re.compile(r"^max_hops = .*must be <= ")


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_structural_errors_are_rejected_by_the_schema(kind, data):
    example = data.draw(invalid_instances(kind))
    message = str(example.assert_rejected())
    if STRUCTURAL.search(message) and not CROSS_FIELD.search(message):
        assert not validator(kind).is_valid(example.data), message


def test_the_classifier_tells_structure_from_semantics():
    structural = ["switches = 0: must be >= 1", "traffic_bytes: missing required field",
                  "bogus: unknown field (allowed: a, b)", "circuit_gbps = 'x': must be a number",
                  "problem = 'z': unknown problem kind (known: a)"]
    semantic = ["traffic_bytes[1][1] = 5.0: the diagonal must be 0 (no traffic to itself)",
                "traffic_bytes[0]: has 2 entries, expected 3", "deps[0].src = 'q': unknown op id",
                "circuit_gbps = inf: must be finite"]
    assert all(STRUCTURAL.search(m) for m in structural)
    assert not any(STRUCTURAL.search(m) for m in semantic)


@pytest.mark.parametrize("kind", KINDS)
def test_a_value_below_each_constant_minimum_is_rejected_by_both(kind):
    """Each top-level numeric bound of the schema is the validator's bound."""
    data = fabricopt.generate(kind, seed=1).to_dict()
    for key, prop in schema(kind)["properties"].items():
        for bound, below in (("minimum", -1), ("exclusiveMinimum", 0)):
            if bound not in prop:
                continue
            bad = dict(data, **{key: prop[bound] + below})
            assert not validator(kind).is_valid(bad)
            with pytest.raises(fabricopt.InvalidInstance, match=rf"^{key} = "):
                instance_from_dict(bad)
            if bound == "minimum" and prop.get("type") == "integer":
                ok = dict(data, **{key: prop[bound]})
                # at the bound, the validator may only object for another field's sake
                try:
                    instance_from_dict(ok)
                except fabricopt.InvalidInstance as exc:
                    assert not str(exc).startswith(f"{key} = {prop[bound]}: must be >="), exc


@pytest.mark.parametrize("bad, message", [
    ({"src": [0], "dst": [1]}, r"^traffic_bytes\.bytes: missing required field$"),
    ({"src": ["0"], "dst": [1], "bytes": [1.0]}, r"^traffic_bytes\.src\[0\] = '0': must be an integer$"),
    ({"src": [0], "dst": [1], "bytes": [-1.0]}, r"^traffic_bytes\.bytes\[0\] = -1\.0: must be >= 0$"),
    ({"src": [0], "dst": [1], "bytes": [1.0], "pairs": []}, r"^traffic_bytes\.pairs: unknown field"),
])
def test_topology_traffic_validates_in_either_form(bad, message):
    """The dense matrix and the sparse {src, dst, bytes} form both validate; a
    structural error in the sparse form is rejected by the schema and the validator."""
    sparse = fabricopt.generate("topology", seed=1).to_dict()
    assert isinstance(sparse["traffic_bytes"], dict)
    dense = dict(sparse, traffic_bytes=instance_from_dict(sparse).traffic.tolist())
    assert validator("topology").is_valid(sparse) and validator("topology").is_valid(dense)
    data = dict(sparse, traffic_bytes=bad)
    assert not validator("topology").is_valid(data)
    with pytest.raises(fabricopt.InvalidInstance, match=message):
        instance_from_dict(data)
