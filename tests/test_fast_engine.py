"""The fast engine (truco_env.fast on truco_env._kernel) against the readable reference engine: thousands of seeded
random matches through both must give identical records (legal sets included), and the same observations and
masks from every seat."""

import random

import numpy as np
import pytest

from truco_env import PRESETS, TrucoState, _kernel, actions, make_config
from truco_env.config import ARGENTINE_ONLY, CHOICES, PAULISTA_ONLY, SENAS_FIELDS, TrucoConfig
from truco_env.encoding import (
    OBS_OFFSETS,
    OBSERVATION_SIZE,
    SENAS_OFFSETS,
    TALLY_SCALE,
    encode_action_mask,
    encode_observation,
)
from truco_env.fast import FastState

MATCHES_PER_PRESET = 400
RANDOM_CONFIGS = 120
MATCHES_PER_RANDOM_CONFIG = 5

_BOOL_FIELDS = ("partner_tie_wins_trick", "end_match_immediately", "malas_buenas", "envido_after_truco_accepted",
                "envido_primero", "envido_primero_after_played", "flor", "mazo_first_trick_bonus", "pica_pica",
                "mao_de_onze", "mao_de_ferro", "mao_de_ferro_blind", "forbid_useless_raise", "covered_card",
                "paulista_mazo")


def random_config(rng: random.Random) -> TrucoConfig:
    """A random valid config: a preset with random values for the fields of its family."""
    while True:
        preset = rng.choice(sorted(PRESETS))
        family = PRESETS[preset].family
        foreign = PAULISTA_ONLY if family == "argentine" else ARGENTINE_ONLY
        overrides = {}
        for name, allowed in CHOICES.items():
            if name not in ("family", *SENAS_FIELDS) and name not in foreign and rng.random() < 0.5:
                overrides[name] = rng.choice(allowed)
        if family == "argentine" and PRESETS[preset].num_players > 2 and rng.random() < 0.5:
            overrides.update(senas=True, sena_catch=rng.choice((0.0, 0.25, 0.6, 1.0)),
                             sena_code=rng.choice(CHOICES["sena_code"]))
        for name in _BOOL_FIELDS:
            if name not in foreign and rng.random() < 0.4:
                overrides[name] = rng.random() < 0.5
        if rng.random() < 0.5:
            overrides["target_score"] = rng.choice((3, 5, 9, 12, 15, 20, 30))
        if family == "argentine" and rng.random() < 0.3:
            overrides["flor_values"] = {k: rng.randrange(0, 8) for k in PRESETS[preset].flor_values}
        try:
            return make_config(preset, **overrides)
        except ValueError:
            continue


def play_both(config, seed, check_obs=False):
    rng = random.Random(seed)
    ref = TrucoState.new(config, seed=seed)
    fast = FastState.new(config, seed=seed)
    buffer = fast.observation_buffer()
    n = config.num_players
    steps = 0
    while not ref.is_over:
        legal = ref.legal_actions()
        assert fast.legal_actions() == legal, (seed, steps)
        assert (fast.actor, fast.phase, fast.score, fast.hand_index) == (ref.actor, ref.phase, ref.score,
                                                                        ref.hand_index)
        if check_obs:
            assert np.array_equal(fast.legal_mask(), encode_action_mask(ref))
            for viewer in range(n):
                expected = encode_observation(ref, viewer)
                got = fast.encode_observation(viewer, buffer)
                if not np.array_equal(got, expected):
                    bad = [name for name, (a, b) in {**OBS_OFFSETS, **SENAS_OFFSETS}.items()
                           if not np.array_equal(got[a:b], expected[a:b])]
                    raise AssertionError(f"seed {seed} step {steps} viewer {viewer}: fields {bad} differ")
        signals = [a for a in legal if a.startswith("sena:")]
        action = rng.choice(signals if signals and rng.random() < 0.5 else legal)  # signals often enough to matter
        ref.apply(action)
        fast.apply(action)
        steps += 1
    assert fast.is_over and fast.winner == ref.winner
    if check_obs:
        for viewer in range(n):
            assert np.array_equal(fast.encode_observation(viewer, buffer), encode_observation(ref, viewer))
    assert fast.match_record(include_legal=True) == ref.match_record(include_legal=True), seed
    return steps


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_identical_records_on_every_preset(preset):
    config = make_config(preset)
    decisions = sum(play_both(config, seed) for seed in range(MATCHES_PER_PRESET))
    assert decisions > MATCHES_PER_PRESET


def test_identical_records_on_random_rule_options():
    rng = random.Random(2024)
    for k in range(RANDOM_CONFIGS):
        config = random_config(rng)
        for j in range(MATCHES_PER_RANDOM_CONFIG):
            play_both(config, seed=1000 * k + j)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_identical_observations_and_masks(preset):
    config = make_config(preset)
    for seed in range(12):
        play_both(config, seed, check_obs=True)


@pytest.mark.parametrize("overrides", [
    {"preset": "argentine-2v2", "sena_catch": 0.5}, {"preset": "argentine-3v3", "pica_pica": True, "flor": True},
    {"preset": "argentine-2v2", "sena_code": "free", "sena_catch": 1.0, "responder": "team_pie"}])
def test_identical_records_and_observations_with_senas(overrides):
    overrides = dict(overrides)
    config = make_config(overrides.pop("preset"), senas=True, **overrides)
    for seed in range(40):
        play_both(config, seed, check_obs=seed < 10)


def test_identical_observations_on_random_rule_options():
    rng = random.Random(77)
    for k in range(25):
        play_both(random_config(rng), seed=k, check_obs=True)


def test_forced_deal_score_and_errors_match_the_reference():
    config = make_config("argentine")
    deal = {"hands": [["7c", "6c", "3e"], ["2o", "1b", "4b"]], "vira": None, "dealer": 1}
    ref = TrucoState.new(config, seed=3, deal=deal, score=[12, 20])
    fast = FastState.new(config, seed=3, deal=deal, score=[12, 20])
    assert fast.legal_actions() == ref.legal_actions()
    for bad in ("quiero", "play:1e", 5, None):
        with pytest.raises(ValueError) as expected:
            ref.apply(bad)
        with pytest.raises(ValueError) as got:
            fast.apply(bad)
        assert str(got.value) == str(expected.value)
    for bad_args in ({"seed": "x"}, {"score": [30, 0]}, {"deal": {"hands": [["1e"]]}}):
        with pytest.raises(ValueError):
            FastState.new(config, **bad_args)


def test_clone_and_reference_follow_the_match():
    config = make_config("argentine-flor")
    rng = random.Random(5)
    fast = FastState.new(config, seed=11)
    for _ in range(30):
        if fast.is_over:
            break
        fast.apply(rng.choice(fast.legal_actions()))
    twin = fast.clone()
    ref = fast.reference()
    assert ref.match_record(True) == fast.match_record(True)
    while not twin.is_over:
        twin.apply(rng.choice(twin.legal_actions()))
    assert fast.reference().match_record(True) == fast.match_record(True)  # the original is untouched


def test_kernel_layout_matches_the_encoder():
    assert _kernel.OBS_SIZE == OBSERVATION_SIZE
    for name, (start, _) in OBS_OFFSETS.items():
        constant = {"hand": "HAND", "hand_slots": "SLOTS", "partner_cards": "PARTNER", "table": "TABLE",
                    "covered": "COVERED", "trick_results": "RESULTS", "trick_index": "TRICK_INDEX",
                    "trick_leader": "TRICK_LEADER", "vira": "VIRA", "manilha_rank": "MANILHA",
                    "truco_level": "LEVEL", "hand_value": "HAND_VALUE", "raise_holder": "RAISE_HOLDER",
                    "pending_truco": "PENDING", "pending_truco_by": "PENDING_BY", "envido_calls": "ECALLS",
                    "envido_status": "ESTATUS", "envido_shown": "ESHOWN", "flor_calls": "FCALLS",
                    "flor_status": "FSTATUS", "flor_holders": "FHOLDERS", "flor_shown": "FSHOWN",
                    "own_points": "OWN_POINTS", "score": "SCORE", "target": "TARGET", "mano": "MANO",
                    "dealer": "DEALER", "actor": "ACTOR", "participants": "PARTICIPANTS", "phase": "PHASE",
                    "special_hand": "SPECIAL", "family": "FAMILY", "num_players": "NUM_PLAYERS",
                    "hand_size": "HAND_SIZE", "options": "OPTIONS", "match_tally": "TALLY"}[name]
        assert getattr(_kernel, "O_" + constant) == start, name
    assert [_kernel.O_SENAS_SEEN, _kernel.O_SENA_CAUGHT_BY, _kernel.O_SENA_CODE] == [SENAS_OFFSETS[name][0] for name in SENAS_OFFSETS]
    assert _kernel.OBS_SIZE_SENAS == SENAS_OFFSETS["sena_code"][1] and _kernel.A_SENA == actions.SENA_BASE
    assert _kernel.NUM_ACTIONS_SENAS == actions.NUM_ACTIONS_SENAS
    assert _kernel.NUM_TALLY == len(actions.TALLY_CLASSES) and _kernel.TALLY_SCALE == TALLY_SCALE
    assert [_kernel._tally_class(a) for a in range(actions.NUM_ACTIONS)] == list(actions.TALLY_CLASS_OF)


def test_deals_fall_back_to_python_when_the_word_batch_runs_out(monkeypatch):
    import truco_env.fast as fast_module

    monkeypatch.setattr(fast_module, "_WORD_BITS", 32 * 30)  # too few outputs for most 40-card shuffles
    for preset in ("argentine", "paulista-clean", "argentine-3v3"):
        config = make_config(preset)
        for seed in range(20):
            play_both(config, seed)
