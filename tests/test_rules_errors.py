"""Bad configs, bad deals, bad scores and illegal actions fail with a ValueError that names the problem and what
is allowed, and never change the state."""

import pytest

from truco_env import PRESETS, TrucoConfig, TrucoState, make_config
from truco_env.config import FIELD_NAMES, SENAS_FIELDS, URUGUAYAN_ONLY

ARG_DEAL = [["7c", "6c", "3e"], ["2o", "1b", "4b"]]
PAU_DEAL = [["5c", "3h", "Ks"], ["2c", "Qd", "6h"]]

CONFIG_ERRORS = [
    # (preset, overrides, words the message must contain)
    ("argentina", {}, ["'argentina'", "argentine", "paulista-clean"]),
    ("argentine", {"targt_score": 15}, ["targt_score", "target_score"]),
    ("argentine", {"target_score": "30"}, ["target_score", "integer"]),
    ("argentine", {"target_score": 0}, ["target_score", "> 0"]),
    ("argentine", {"target_score": True}, ["target_score"]),
    ("argentine", {"flor": "yes"}, ["flor", "true or false"]),
    ("argentine", {"num_players": 3}, ["num_players", "2, 4 or 6"]),
    ("argentine", {"num_players": 4.0}, ["num_players"]),
    ("paulista", {"num_players": 6}, ["num_players", "argentine"]),
    ("argentine", {"responder": "partner"}, ["responder", "next_opponent", "team_pie"]),
    ("argentine", {"falta_envido": "all"}, ["falta_envido", "leader_needs", "malas_match", "whole_match"]),
    ("paulista", {"all_tricks_tied": "replay"}, ["all_tricks_tied", "no_points", "dealer_team", "mao_team"]),
    ("paulista", {"deck": "short"}, ["deck", "dirty", "clean"]),
    ("argentine", {"deck": "clean"}, ["deck", "paulista"]),
    ("argentine", {"mao_de_onze": False}, ["mao_de_onze", "paulista"]),
    ("paulista", {"flor": True}, ["flor", "argentine"]),
    ("paulista", {"falta_envido": "whole_match"}, ["falta_envido", "argentine"]),
    ("argentine", {"pica_pica": True}, ["pica_pica", "num_players = 6"]),
    ("argentine-flor", {"flor_values": {"achico": 4}}, ["flor_values", "uncontested_per_flor"]),
    ("argentine-flor", {"flor_values": {**{k: 3 for k in (
        "uncontested_per_flor", "contested_per_flor", "achico", "contraflor_quiero", "contraflor_no_quiero",
        "resto_bonus_per_flor", "resto_no_quiero_direct")}, "resto_no_quiero_after_contraflor": -1}},
     ["resto_no_quiero_after_contraflor", "0..1000"]),
    ("argentine", {"family": "paulista"}, ["family", "preset"]),
]


@pytest.mark.parametrize("preset,overrides,words", CONFIG_ERRORS,
                         ids=[f"{p}-{next(iter(o), 'preset')}" for p, o, _ in CONFIG_ERRORS])
def test_bad_config_names_the_problem(preset, overrides, words):
    with pytest.raises(ValueError) as err:
        make_config(preset, **overrides)
    for word in words:
        assert word in str(err.value)


def test_config_defaults_and_round_trip():
    uruguayan = TrucoConfig(family="uruguayan", num_players=4)
    for name, cfg in [*PRESETS.items(), ("uruguayan", uruguayan)]:
        left_out = (set() if cfg.senas else set(SENAS_FIELDS)) | (
            set() if cfg.family == "uruguayan" else set(URUGUAYAN_ONLY))
        assert set(cfg.to_dict()) == set(FIELD_NAMES) - left_out, name
        assert TrucoConfig.from_dict(cfg.to_dict()) == cfg, name
    assert (uruguayan.target_score, uruguayan.flor, uruguayan.falta_envido) == (40, True, "malas_match")
    assert make_config("argentine").target_score == 30 and make_config("argentine").malas_buenas is True
    assert make_config("argentine", target_score=15).malas_buenas is False
    assert make_config("argentine", target_score=15, malas_buenas=True).malas_buenas is True
    assert make_config("paulista").target_score == 12
    assert make_config("argentine-flor").flor is True and make_config("paulista-clean").deck == "clean"
    with pytest.raises(ValueError, match="unknown config field"):
        TrucoConfig.from_dict({"family": "argentine", "colour": "red"})


DEAL_ERRORS = [
    # (preset, deal, score, words)
    ("argentine", {"hands": [["7c", "6c", "3e"], ["7c", "1b", "4b"]], "dealer": 1}, None, ["duplicate", "'7c'"]),
    ("argentine", {"hands": [["7c", "6c"], ["2o", "1b", "4b"]], "dealer": 1}, None, ["seat 0", "exactly 3"]),
    ("argentine", {"hands": [["7c", "6c", "3e"]], "dealer": 1}, None, ["2 hands"]),
    ("argentine", {"hands": [["7c", "6c", "Qs"], ["2o", "1b", "4b"]]}, None, ["'Qs'", "Spanish", "e b o c"]),
    ("argentine", {"hands": [["7c", "6c", "8e"], ["2o", "1b", "4b"]]}, None, ["'8e'", "ranks 1-7 10 11 12"]),
    ("paulista", {"hands": [["12e", "3h", "Ks"], ["2c", "Qd", "6h"]], "vira": "4d"}, None, ["'12e'", "French"]),
    ("paulista", {"hands": PAU_DEAL, "vira": "3h"}, None, ["vira", "'3h'", "also in a hand"]),
    ("paulista", {"hands": PAU_DEAL}, None, ["vira"]),
    ("argentine", {"hands": ARG_DEAL, "vira": "1o"}, None, ["no vira"]),
    ("paulista-clean", {"hands": [["Qd", "3h", "Kc"], ["2c", "Ad", "5c"]], "vira": "3c"}, None,
     ["'5c'", "clean"]),
    ("paulista-clean", {"hands": [["Qd", "3h", "Kc"], ["2c", "Ad", "Js"]], "vira": "7c"}, None, ["vira", "'7c'"]),
    ("argentine", {"hands": ARG_DEAL, "dealer": 2}, None, ["dealer", "0..1"]),
    ("argentine", {"hands": ARG_DEAL, "dealer": "1"}, None, ["dealer"]),
    ("argentine", {"hand": ARG_DEAL}, None, ["'hand'", "'hands'"]),
    ("argentine", ["7c"], None, ["deal must be a dict"]),
    ("argentine", None, [30, 0], ["score", "target_score"]),
    ("argentine", None, [-1, 0], ["score"]),
    ("argentine", None, [1, 2, 3], ["pair of integers"]),
    ("argentine", None, "0-0", ["pair of integers"]),
]


@pytest.mark.parametrize("preset,deal,score,words", DEAL_ERRORS, ids=[str(i) for i in range(len(DEAL_ERRORS))])
def test_bad_deal_or_score_names_the_problem(preset, deal, score, words):
    with pytest.raises(ValueError) as err:
        TrucoState.new(make_config(preset), seed=0, deal=deal, score=score)
    for word in words:
        assert word in str(err.value)


def test_bad_seed_and_config_type():
    with pytest.raises(ValueError, match="seed"):
        TrucoState.new(make_config("argentine"), seed="abc")
    with pytest.raises(ValueError, match="TrucoConfig"):
        TrucoState.new({"family": "argentine"})


@pytest.mark.parametrize("action", ["play:1e", "play:Qs", "retruco", "seis", "flor", "quiero", "nonsense", 7, None])
def test_illegal_action_names_it_and_the_legal_ones(action):
    state = TrucoState.new(make_config("argentine"), seed=0, deal={"hands": ARG_DEAL, "dealer": 1})
    before = (state.score, state.actor, state.legal_actions(), state.match_record(include_legal=True))
    with pytest.raises(ValueError) as err:
        state.apply(action)
    message = str(err.value)
    assert repr(action) in message
    for legal in state.legal_actions():
        assert legal in message
    assert before == (state.score, state.actor, state.legal_actions(), state.match_record(include_legal=True))


def test_every_rules_field_and_each_value_it_takes_is_documented_in_rules_md():
    """docs/rules.md states every option as a field with its values (the §5 and §8.9 tables): a field added to the
    config without its row there, or a value added to a field's choices without it, fails here rather than drifting
    away from the docs."""
    import re
    from pathlib import Path

    from truco_env.config import CHOICES

    rows = [line for line in (Path(__file__).resolve().parent.parent / "docs" / "rules.md").read_text().splitlines()
            if line.startswith("|")]
    for name in FIELD_NAMES:
        mine = [line for line in rows if re.match(rf"\|\s*`{name}`\s*\|", line)]
        assert mine, f"docs/rules.md has no table row for the config field {name!r}"
        for value in CHOICES.get(name, ()):
            assert any(f'"{value}"' in line or f"`{value}`" in line for line in mine), \
                f"docs/rules.md's row of {name!r} does not name the value {value!r}"


@pytest.mark.parametrize("value", [1001, 2**31, 10**30])
def test_a_flor_value_beyond_the_target_bound_is_refused_when_the_rules_are_made(value):
    """A flor value is bounded as the target is (0..1000): one of 2**31 was accepted, then the environment stopped
    at its first reset with an OverflowError (the compiled engine keeps points in 32 bits), and one of a million
    made a match whose record truco replay refused (a score of 10**6 or more)."""
    values = {**make_config("uruguayan").flor_values, "achico": value}
    for preset in ("uruguayan", "argentine-flor"):
        with pytest.raises(ValueError, match=r"^config field 'flor_values\['achico'\]' must be an integer 0..1000"):
            make_config(preset, flor_values=values)
    make_config("uruguayan", flor_values={**values, "achico": 1000})


def test_flor_values_with_keys_of_mixed_types_are_one_line():
    """Keys that do not sort together (1 and 'a', from YAML or JSON) ended in a TypeError from sorting them."""
    with pytest.raises(ValueError, match="must be a dict with exactly the keys"):
        make_config("uruguayan", flor_values={1: 2, "a": 3})
