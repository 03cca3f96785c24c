"""The fuzz tests share one context: the installed tools' options (learnt
once), the mutator's seeds, no oracle (tests that need it make their own)."""

from __future__ import annotations

import pytest

from fuzz import Context, FuzzConfig, make_context
from fuzz.mutate import attack_seeds, benign_seeds
from fuzz.options import installed_options


@pytest.fixture(scope="session")
def ctx() -> Context:
    return make_context(FuzzConfig(mode="ci"), installed_options(), attack_seeds(),
                        benign_seeds())
