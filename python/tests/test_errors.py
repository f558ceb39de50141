"""Bad input raises ValueError with the CLI's one-line message; a run that finds nothing
raises elk_opt.SolverError."""

import pytest

import elk_opt
from conftest import cli_error


def test_unknown_model_is_a_value_error_with_the_cli_message():
    message, code = cli_error("compare", "--model", "no-such-model")
    assert code == 2
    with pytest.raises(ValueError) as e:
        elk_opt.compare("no-such-model")
    assert str(e.value) == message
    with pytest.raises(ValueError) as e:
        elk_opt.Model("no-such-model")
    assert str(e.value) == message


def test_unknown_chip_is_a_value_error_with_the_cli_message():
    message, code = cli_error("compare", "--model", "llama2-7b", "--chip", "no-such-chip")
    assert code == 2
    with pytest.raises(ValueError) as e:
        elk_opt.Chip("no-such-chip")
    assert str(e.value) == message


def test_bad_hbm_bandwidth_is_a_value_error_with_the_cli_message():
    message, code = cli_error("compare", "--model", "llama2-7b", "--hbm-tbps=-1")
    assert code == 2
    with pytest.raises(ValueError) as e:
        elk_opt.Chip("ipu-pod4", hbm_tbps=-1)
    assert str(e.value) == message


def test_block_float_activations_are_a_value_error_with_the_cli_message():
    message, code = cli_error("compare", "--model", "llama2-7b", "--dtype", "bfp8")
    assert code == 2
    assert "activations in bfp8 are not modelled" in message
    with pytest.raises(ValueError) as e:
        elk_opt.Model("llama2-7b", dtype="bfp8")
    # The CLI puts clap's `--dtype bfp8: ` before the parser's message, as for every --dtype.
    assert message == f"--dtype bfp8: {e.value}"


def test_bad_range_is_a_value_error_with_the_cli_message():
    message, code = cli_error("compare", "--model", "llama2-7b", "--ops", "5..2")
    assert code == 2
    with pytest.raises(ValueError) as e:
        elk_opt.compare("llama2-7b", ops="5..2")
    assert str(e.value) == message


def test_a_window_of_zero_is_a_value_error_with_the_cli_message():
    message, code = cli_error("compare", "--model", "llama2-7b", "--window", "0")
    assert code == 2
    assert "a window of 0 leaves it none" in message
    with pytest.raises(ValueError) as e:
        elk_opt.compare("llama2-7b", window=0)
    assert str(e.value) == message


def test_unknown_method_and_ideal_are_value_errors():
    inst = elk_opt.instance("llama2-7b", num_layers=1, ops="0..4")
    with pytest.raises(ValueError):
        inst.solve("no-such-method")
    with pytest.raises(ValueError):
        inst.solve("ideal")


def test_solver_error_is_a_runtime_error():
    assert issubclass(elk_opt.SolverError, RuntimeError)


def test_a_method_that_finds_no_schedule_raises_solver_error():
    # On a chip with 150 kB of SRAM per core, Static finds no room for an attention operator:
    # the CLI exits 1, Python raises SolverError (a NameError here once, when the module that
    # raises it did not import it).
    small = elk_opt.Chip("ipu-pod4", sram_bytes_per_core=150_000)
    with pytest.raises(elk_opt.SolverError, match="static found no schedule for llama2-7b"):
        elk_opt.solve("llama2-7b", chip=small, method="static", num_layers=1)
