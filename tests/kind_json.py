"""Shared helpers of the problem-kind format tests: edited copies of a JSON instance,
and the file round trip every kind must survive."""

import json

import fabricopt
from fabricopt.problems import instance_from_dict


def edited(base, **changes):
    """A deep copy of the JSON object ``base`` with top-level fields replaced."""
    data = json.loads(json.dumps(base))
    data.update(changes)
    return data


def item_edited(items, k, **changes):
    """A deep copy of the list of objects ``items`` with fields of item ``k`` replaced."""
    out = json.loads(json.dumps(items))
    out[k].update(changes)
    return out


def assert_file_round_trip(base, tmp_path):
    """``base`` -> instance -> file -> instance: the same instance, and the file holds
    exactly ``base``. Returns the instance."""
    inst = instance_from_dict(base)
    path = tmp_path / "instance.json"
    fabricopt.dump(inst, path)
    assert fabricopt.load(path) == inst
    assert json.loads(path.read_text()) == base
    return inst
