"""Signed provenance records in Python: `PrivatizedLabels.save` / `.load` with a `SigningKey`,
the same files as the CLI's `privatize` and `fit` read and write. A record signed by a trusted
key verifies and names it; an edited one is refused; an unsigned one, or one signed by another
key, gives a guarantee that does not hold for real data, with a `PrivacyWarning`."""

from __future__ import annotations

import json
import os
import stat
import warnings

import numpy as np
import pytest

import privpref
from privpref.errors import ParameterError, PrivacyWarning, ProvenanceError

from conftest import btl


def _private(n=200, seed=None):
    x, y, _ = btl(n, 3, seed=1)
    return x, privpref.RandomizedResponse(1.0).privatize(y, seed=seed)


def test_signed_round_trip_names_the_key(tmp_path):
    key = privpref.SigningKey.generate()
    x, labels = _private()
    side = labels.save(tmp_path / "yp.npy", key)
    assert side == tmp_path / "yp.npy.provenance.json"
    rec = json.loads(side.read_text())
    assert rec["signature"]["key_id"] == key.key_id and rec["version"] == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = privpref.PrivatizedLabels.load(tmp_path / "yp.npy", trusted_keys=[key.public_key_pem])
    assert back.provenance["origin"] == "signed-record"
    assert back.provenance["verified_by"] == key.key_id
    assert back.guarantee.holds_for_real_data and back.eps == 1.0
    np.testing.assert_array_equal(back.labels, labels.labels)
    fit = privpref.fit(x, back, loss="debiased-rr", eps=1.0, constraint="theta-b", radius=2.0)
    assert fit.guarantee is not None and fit.guarantee.holds_for_real_data


def test_edited_records_are_refused(tmp_path):
    key = privpref.SigningKey.generate()
    _, labels = _private()
    side = labels.save(tmp_path / "yp.npy", key)
    rec = json.loads(side.read_text())
    for field, value in [("eps", 0.1), ("generator", "simulation"), ("n", 201)]:
        edited = dict(rec, **{field: value})
        if field == "generator":
            edited["seed"] = 1
        side.write_text(json.dumps(edited))
        with pytest.raises(ProvenanceError, match="does not verify|labels"):
            privpref.PrivatizedLabels.load(tmp_path / "yp.npy", trusted_keys=[key.public_key_pem])
    # The right record, the labels file edited.
    side.write_text(json.dumps(rec))
    raw = bytearray((tmp_path / "yp.npy").read_bytes())
    raw[-1] ^= 1
    (tmp_path / "yp.npy").write_bytes(bytes(raw))
    with pytest.raises(ProvenanceError, match="SHA-256"):
        privpref.PrivatizedLabels.load(tmp_path / "yp.npy", trusted_keys=[key.public_key_pem])


def test_records_no_trusted_key_signed_do_not_hold(tmp_path):
    key, forger = privpref.SigningKey.generate(), privpref.SigningKey.generate()
    _, labels = _private()
    labels.save(tmp_path / "yp.npy", forger)
    with pytest.warns(PrivacyWarning, match=f"signed by key {forger.key_id}"):
        back = privpref.PrivatizedLabels.load(tmp_path / "yp.npy", trusted_keys=[key.public_key_pem])
    assert back.provenance["origin"] == "unverified-record"
    assert not back.guarantee.holds_for_real_data
    side = tmp_path / "yp.npy.provenance.json"
    rec = json.loads(side.read_text())
    rec["signature"] = None
    side.write_text(json.dumps(rec))
    with pytest.warns(PrivacyWarning, match="not signed"):
        back = privpref.PrivatizedLabels.load(tmp_path / "yp.npy", trusted_keys=[forger.public_key_pem])
    assert not back.guarantee.holds_for_real_data


def test_only_library_privatisations_are_recorded(tmp_path):
    key = privpref.SigningKey.generate()
    asserted = privpref.PrivatizedLabels.asserted(np.array([0, 1, 1], dtype=np.uint8), "rr", 1.0)
    with pytest.raises(ParameterError):
        asserted.save(tmp_path / "ya.npy", key)
    assert not (tmp_path / "ya.npy").exists(), "no labels left without their record"
    _, labels = _private()
    labels.save(tmp_path / "yp.npy", key)
    with pytest.raises(FileExistsError):
        labels.save(tmp_path / "yp.npy", key)


def test_keys_are_private_and_never_replaced(tmp_path):
    key = privpref.SigningKey.generate()
    secret, public = key.save(tmp_path / "keys")
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert privpref.SigningKey.load(secret).key_id == key.key_id
    with pytest.raises(FileExistsError):
        key.save(tmp_path / "keys")
    os.chmod(secret, 0o644)
    with pytest.raises(PermissionError, match="chmod 600"):
        privpref.SigningKey.load(secret)
    assert "PRIVATE" not in repr(key)
    with pytest.raises(ProvenanceError):
        privpref.SigningKey.from_pem(public.read_text())


def test_the_cli_and_python_verify_each_other(tmp_path, cli, key_dir):
    x, y, _ = btl(200, 3, seed=2)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    code, _, err = cli(["privatize", "--y", tmp_path / "y.npy", "--out", tmp_path / "yc.npy", "--eps", "1"])
    assert code == 0, err
    cli_public = key_dir / "signing-key.pub.pem"
    back = privpref.PrivatizedLabels.load(tmp_path / "yc.npy", trusted_keys=[cli_public])
    assert back.provenance["origin"] == "signed-record" and back.guarantee.holds_for_real_data
    # Python signs, the CLI verifies with the Python key's public key.
    key = privpref.SigningKey.generate()
    _, public = key.save(tmp_path / "pykeys")
    labels = privpref.RandomizedResponse(1.0).privatize(y)
    labels.save(tmp_path / "yq.npy", key)
    args = ["fit", "--x", tmp_path / "x.npy", "--y", tmp_path / "yq.npy", "--loss", "debiased-rr", "--eps", "1"]
    args += ["--radius", "2", "--trusted-key", public, "--out", tmp_path / "fit.json"]
    code, fit, err = cli(args)
    assert code == 0, err
    assert fit["provenance"]["verified_by"] == key.key_id
    assert fit["guarantee"]["holds_for_real_data"] is True
