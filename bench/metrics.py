"""The comparison metric, one definition for every codec: decoded values are quantised to 8-bit codes in the
source file's layout (its own channel count; normals with Z rebuilt from X,Y), then the MSE of every channel of
every file at mip 0; a material's PSNR is that of the mean of its channels' MSEs (channels weighted equally).
This is NTC's psnr8_mip0 and `nmc validate`'s psnr8_mip0_db (docs/cli.md, spec 8.10).
"""

import math

try:  # only the array functions need numpy; the PSNR helpers run anywhere
    import numpy as np
except ImportError:
    np = None

PSNR_CAP_DB = 99.0  # lossless (MSE 0) is shown as 99 dB, as nmc validate and NTC's CSV do


def quantise8(values):
    """Float 8-bit-scale values -> codes: floor(clamp(v, 0, 255) + 0.5), spec 8.10's rule scaled by 255."""
    return np.floor(np.clip(np.asarray(values, np.float64), 0.0, 255.0) + 0.5).astype(np.uint8)


def rebuild_normal_z(xy_codes):
    """8-bit X,Y codes (..., 2) -> the 8-bit Z code of the unit normal, Z = sqrt(1 - x^2 - y^2) >= 0, x = 2c/255 - 1."""
    v = xy_codes.astype(np.float64) / 255.0 * 2.0 - 1.0
    z = np.sqrt(np.clip(1.0 - (v * v).sum(-1), 0.0, 1.0))
    return quantise8((z * 0.5 + 0.5) * 255.0)


def to_stored_layout(kind, decoded, stored):
    """Codec output -> uint8 codes in the source file's layout (same shape as `stored`).

    decoded: (H, W, K) codes or floats in 0..255 with the channels the codec carries: grey maps channel 0,
    normal maps X,Y in channels 0,1, colour maps the stored channels. A grey file stored as RGB gets the decoded
    grey in all three channels; a normal file gets Z rebuilt from the decoded X,Y (so BC5, ASTC -normal and any
    XY-only codec are judged alike); a stored alpha that the codec does not carry is copied (counted exact).
    """
    decoded = np.asarray(decoded)
    if decoded.ndim == 2:
        decoded = decoded[..., None]
    c = stored.shape[-1]
    out = stored.copy()
    if kind == "grey":
        g = quantise8(decoded[..., 0])
        for i in range(min(c, 3)):
            out[..., i] = g
    elif kind == "normal":
        xy = quantise8(decoded[..., :2])
        out[..., :2] = xy
        if c >= 3:
            out[..., 2] = rebuild_normal_z(xy)
    else:
        k = min(c, decoded.shape[-1])
        out[..., :k] = quantise8(decoded[..., :k])
    return out


def channel_mse(reference, decoded):
    """Per-channel mean squared code difference (list of C floats) of two (H, W, C) uint8 arrays."""
    if reference.shape != decoded.shape:
        raise ValueError("shape %s != reference shape %s" % (decoded.shape, reference.shape))
    d = reference.astype(np.float64) - decoded.astype(np.float64)
    return [float(x) for x in (d * d).reshape(-1, d.shape[-1]).mean(0)]


def psnr_from_mse(mse):
    """PSNR in dB of an MSE in squared 8-bit codes, capped at PSNR_CAP_DB."""
    if mse <= 0:
        return PSNR_CAP_DB
    return min(PSNR_CAP_DB, 10.0 * math.log10(255.0 * 255.0 / mse))


def mse_from_psnr(psnr):
    """Inverse of psnr_from_mse (for figures published as PSNR only); inf/99 dB -> 0."""
    if psnr is None or psnr >= PSNR_CAP_DB or math.isinf(psnr):
        return 0.0
    return 255.0 * 255.0 * 10.0 ** (-psnr / 10.0)


def pooled_psnr(channel_mses):
    """PSNR of the mean of the channels' MSEs (every channel weighted equally)."""
    if not channel_mses:
        raise ValueError("no channels")
    return psnr_from_mse(sum(channel_mses) / len(channel_mses))
