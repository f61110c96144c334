"""The digits lab (examples/train_digits.py) reaches its accuracy targets, and its checkpoint reloads."""
import importlib.util
import pathlib

import pytest

import tinygrad_course as tc

LAB = pathlib.Path(__file__).resolve().parents[2] / "examples" / "train_digits.py"


def _lab():
    spec = importlib.util.spec_from_file_location("train_digits", LAB)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.parametrize("name,target", [("mlp", 0.97), ("cnn", 0.98)])
def test_lab_reaches_target_accuracy_and_checkpoint_reloads(tmp_path, name, target):
    lab = _lab()
    path = tmp_path / f"{name}.pt"
    result = lab.run(name, epochs=lab.DEFAULT_EPOCHS[name], seed=0, checkpoint=path, progress=False)
    assert result["test_accuracy"] >= target, result["history"][-3:]
    # the loss went down and the last checkpoint describes the last epoch
    history = result["history"]
    assert history[-1]["train_loss"] < history[0]["train_loss"]
    ckpt = tc.load(path)
    assert ckpt["epoch"] == len(history) - 1 and ckpt["test_accuracy"] == result["test_accuracy"]
    fresh = lab.MODELS[name]()
    fresh.load_state_dict(ckpt["model"])
    fresh.eval()
    trained = result["model"].eval()
    x = tc.datasets.Digits(train=False).data[:16]
    with tc.no_grad():
        assert fresh(x).argmax(1).tolist() == trained(x).argmax(1).tolist()


def test_lab_runs_end_to_end_quickly(tmp_path, capsys):
    lab = _lab()
    lab.main(["--model", "mlp", "--epochs", "1", "--checkpoint-dir", str(tmp_path), "--no-progress"])
    assert "mlp: test accuracy" in capsys.readouterr().out
    assert (tmp_path / "digits_mlp.pt").exists()
