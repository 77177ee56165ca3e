"""The win model: its shape, that fitting recovers a known model, and that the shipped
English model is calibrated on self-played games it was not fitted on."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from anchor.engine import Ruleset, Solver
from anchor.engine.leaves import Leaves
from anchor.engine.selfplay import EquityPlayer, play_game
from anchor.engine.winpct import MODELS, WinModel, fit, model_for, samples

from .conftest import data_path

ENGLISH = Ruleset.load("english")


def test_shape():
    m = model_for(ENGLISH)
    assert set(MODELS) >= {"english", "russian", "erudit"}
    assert m.on_turn(0, 80) > 0.5  # being on turn is worth something
    assert m.on_turn(-30, 90) < m.on_turn(0, 90) < m.on_turn(30, 90)
    assert m.on_turn(30, 10) > m.on_turn(30, 90)  # a lead counts more near the end
    assert m.after(25, 40, on_turn=False) == pytest.approx(1 - m.on_turn(-25, 40))
    assert (m.on_turn(1, 0), m.on_turn(0, 0), m.on_turn(-1, 0)) == (1.0, 0.5, 0.0)
    assert m.on_turn(-(10**6), 1) == 0.0 and m.on_turn(10**6, 1) == 1.0


def test_fitting_recovers_a_known_model():
    truth = WinModel(alpha=0.12, tempo=12.0, beta=0.08)
    rng = random.Random(3)
    data = []
    for _ in range(20_000):
        lead, left = rng.uniform(-150, 150), rng.randrange(1, 94)
        data.append((lead, left, 1.0 if rng.random() < truth.on_turn(lead, left) else 0.0))
    got = fit(data, betas=[b / 100 for b in range(0, 21)])
    assert got.beta == pytest.approx(truth.beta, abs=0.021)
    assert got.alpha == pytest.approx(truth.alpha, rel=0.25)
    assert got.tempo == pytest.approx(truth.tempo, abs=4)


def test_the_english_model_is_calibrated_on_games_it_never_saw(magpie_twl06):
    """150 games between equity players, seeds far from the 1..3000 it was fitted on: its
    Brier score beats both a coin and "whoever is ahead wins", and in every tenth of its
    predictions with enough positions the share won is within 0.08 of what it said."""
    solver = Solver(magpie_twl06, ENGLISH)
    leaves = Leaves.open(data_path("kwg", "TWL06.klv2"), ENGLISH)
    games = [
        play_game(solver, seed, policies=[EquityPlayer(leaves), EquityPlayer(leaves)], check=False)
        for seed in range(50_001, 50_151)
    ]
    data = samples(games)
    assert len(data) > 2_000
    model = model_for(ENGLISH)
    predicted = [model.on_turn(lead, left) for lead, left, _ in data]
    brier = sum((p - y) ** 2 for p, (_, _, y) in zip(predicted, data, strict=True)) / len(data)
    ahead = [1.0 if lead > 0 else 0.5 if lead == 0 else 0.0 for lead, _, _ in data]
    step = sum((p - y) ** 2 for p, (_, _, y) in zip(ahead, data, strict=True)) / len(data)
    assert brier < 0.2 and brier < step - 0.03, (brier, step)
    buckets: dict[int, list[tuple[float, float]]] = {}
    for p, (_, _, y) in zip(predicted, data, strict=True):
        buckets.setdefault(min(int(p * 10), 9), []).append((p, y))
    checked = 0
    for rows in buckets.values():
        if len(rows) >= 150:
            said = math.fsum(p for p, _ in rows) / len(rows)
            won = math.fsum(y for _, y in rows) / len(rows)
            assert abs(said - won) < 0.08, (said, won, len(rows))
            checked += 1
    assert checked >= 5


@given(
    st.sampled_from(sorted(MODELS)),
    st.lists(
        st.tuples(st.floats(-5000, 5000, allow_nan=False), st.integers(-2, 100)),
        max_size=50,
    ),
    st.booleans(),
)
def test_many_chances_at_once_are_each_chance(name, playouts, on_turn):
    """`chances` (what summaries and pruning by win use) gives exactly `after` of each."""
    model = MODELS[name]
    leads = [lead for lead, _ in playouts]
    unplayed = [n for _, n in playouts]
    assert model.chances(leads, unplayed, on_turn) == [
        model.after(lead, n, on_turn) for lead, n in playouts
    ]
