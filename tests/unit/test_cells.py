"""Tests of accessibility_lib.geometry.cells: argmax cells (with bias, chunked, any dtype), the Voronoi
assignment, planes and 2-D slices."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from accessibility_lib.geometry import cells, slices


def _rand(V=700, d=24, N=300, seed=0):
    g = torch.Generator().manual_seed(seed)
    W = (
        torch.randn(V, d, generator=g, dtype=torch.float64) * torch.rand(V, 1, generator=g, dtype=torch.float64) * 3
    )  # unequal norms
    b = torch.randn(V, generator=g, dtype=torch.float64)
    x = torch.randn(N, d, generator=g, dtype=torch.float64) * 4
    return W, b, x


@pytest.mark.parametrize("chunk,point_chunk", [(50, 150), (64, 1000), (699, 33), (10_000, 2048)])
def test_argmax_tokens_matches_dense_argmax(chunk, point_chunk):
    W, b, x = _rand()
    ref = (x @ W.T + b).argmax(1)
    assert torch.equal(cells.argmax_tokens(x, W, b, chunk=chunk, point_chunk=point_chunk), ref)
    assert torch.equal(cells.argmax_tokens(x, W, None, chunk=chunk, point_chunk=point_chunk), (x @ W.T).argmax(1))


def test_ties_go_to_the_lowest_id_across_chunks():
    W = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 0.0]])  # rows 0, 2, 3 identical
    x = torch.tensor([[2.0, 1.0]])
    for chunk in (1, 2, 3, 4):
        assert cells.argmax_tokens(x, W, chunk=chunk).tolist() == [0]


def test_hand_built_unequal_norms_argmax_differs_from_nearest_row():
    # f_0 = (10, 0) is long, f_1 = (1, 1) is short. At x = (1, 1): f_0.x = 10 > f_1.x = 2 (argmax 0),
    # but x coincides with f_1, so its nearest row is 1 (||x - f_0|| = 9.06 > 0).
    W = torch.tensor([[10.0, 0.0], [1.0, 1.0]])
    x = torch.tensor([[1.0, 1.0], [-1.0, 3.0]])
    assert cells.argmax_tokens(x, W).tolist() == [0, 1]
    assert cells.nearest_rows(x, W).tolist() == [1, 1]
    # with a bias the argmax can change; the nearest-row assignment ignores it
    assert cells.argmax_tokens(x, W, torch.tensor([0.0, 9.0])).tolist() == [1, 1]


def test_nearest_rows_is_the_voronoi_assignment():
    W, _, x = _rand(V=300, N=200)
    ref = torch.cdist(x, W).argmin(1)
    got = cells.nearest_rows(x, W, chunk=77)
    assert torch.equal(got, ref)
    assert (got != cells.argmax_tokens(x, W)).float().mean() > 0.3  # they differ a lot with unequal norms


@pytest.mark.parametrize(
    "wdt,pdt", [(torch.bfloat16, torch.float32), (torch.float16, torch.float64), (torch.float32, torch.bfloat16)]
)
def test_dtype_mismatch(wdt, pdt):
    W, b, x = _rand()
    Wl, xl = W.to(wdt), x.to(pdt)
    got = cells.argmax_tokens(xl, Wl, b.to(wdt))
    dt = cells.compute_dtype_for(wdt, pdt)
    assert dt in (torch.float32, torch.float64)
    ref = (xl.to(dt) @ Wl.to(dt).T + b.to(wdt).to(dt)).argmax(1)
    assert torch.equal(got, ref)
    assert got.dtype == torch.int64 and got.device.type == "cpu"


def test_numpy_inputs():
    W, b, x = _rand()
    assert torch.equal(cells.argmax_tokens(x.numpy(), W.numpy(), b.numpy()), (x @ W.T + b).argmax(1))


def test_bad_inputs():
    W, b, x = _rand()
    with pytest.raises(ValueError, match="points must have shape"):
        cells.argmax_tokens(x[:, :5], W, b)
    with pytest.raises(ValueError, match="points must be a 2-D"):
        cells.argmax_tokens(x[0], W, b)
    with pytest.raises(ValueError, match="b_U must have shape"):
        cells.argmax_tokens(x, W, b[:-1])
    with pytest.raises(ValueError, match="finite"):
        cells.argmax_tokens(x * float("nan"), W, b)
    with pytest.raises(ValueError, match="chunk"):
        cells.argmax_tokens(x, W, b, chunk=0)
    with pytest.raises(ValueError, match="empty"):
        cells.argmax_tokens(x[:0], W, b)
    with pytest.raises(ValueError, match="not collinear"):
        slices.plane_through(torch.stack([x[0], 2 * x[0], 3 * x[0]]))
    with pytest.raises(ValueError, match="shape \\(3, d_model\\)"):
        slices.plane_through(x[:4])
    with pytest.raises(ValueError, match="resolution"):
        slices.argmax_slice(slices.plane_through(x[:3]), W, b, resolution=1)


def test_plane_through_anchors():
    _, _, x = _rand()
    pl = slices.plane_through(x[:3])
    assert torch.allclose(pl.basis @ pl.basis.T, torch.eye(2, dtype=torch.float64), atol=1e-12)
    back = pl.points(pl.anchors_uv)
    assert torch.allclose(back, x[:3], atol=1e-10)  # the anchors lie on the plane
    assert np.isclose(np.linalg.norm(pl.anchors_uv, axis=1).max(), pl.scale)


def test_slice_equals_direct_argmax_on_the_grid():
    W, b, x = _rand(V=2000, d=16)
    pl = slices.plane_through(x[:3])
    s = slices.argmax_slice(pl, W, b, resolution=60, extent=2.0, center=(0.3, -0.2))
    uu, vv = np.meshgrid(s.u, s.v)
    pts = pl.points(np.stack([uu.ravel(), vv.ravel()], 1))
    direct = cells.argmax_tokens(pts, W, b).numpy().reshape(60, 60)
    assert np.mean(direct == s.tokens) > 0.999
    vdirect = cells.nearest_rows(pts, W).numpy().reshape(60, 60)
    assert np.mean(vdirect == s.voronoi) > 0.999
    assert 1 < s.n_cells <= s.n_cells_plane
    assert 0 < s.frac_differ < 1
    # the anchors' own argmax tokens appear at the anchors' pixels
    for (u, v), a in zip(pl.anchors_uv, cells.argmax_tokens(x[:3], W, b).tolist()):
        if abs(u - s.center[0]) < s.half_width and abs(v - s.center[1]) < s.half_width:
            i, j = np.abs(s.u - u).argmin(), np.abs(s.v - v).argmin()
            assert a in s.tokens[max(j - 1, 0) : j + 2, max(i - 1, 0) : i + 2]


def test_plane_candidates_count_cells_of_the_whole_plane():
    # three tokens whose cells in the plane are three sectors; a fourth is dominated everywhere
    coef = torch.tensor([[1.0, 0.0, 0.0], [-1.0, 1.0, 0.0], [-1.0, -1.0, 0.0], [0.0, 0.0, -1.0]], dtype=torch.float64)
    assert slices.plane_candidates(coef).tolist() == [0, 1, 2]


def test_pca_plane():
    g = torch.Generator().manual_seed(1)
    X = torch.randn(500, 10, generator=g, dtype=torch.float64) * torch.tensor(
        [5.0, 3.0] + [0.1] * 8, dtype=torch.float64
    )
    pl = slices.pca_plane(X)
    assert abs(float(pl.basis[0, 0].abs())) > 0.99 and abs(float(pl.basis[1, 1].abs())) > 0.99
    assert pl.anchors_uv.shape == (500, 2)
    with pytest.raises(ValueError, match="two directions"):
        slices.pca_plane(torch.ones(5, 10, dtype=torch.float64))


def test_drawing_and_static_explorer():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from accessibility_lib.figures import cell_plots

    W, b, x = _rand(V=300, d=8)
    s = slices.argmax_slice(slices.plane_through(x[:3]), W, b, resolution=24)
    ids, frac = cell_plots.top_tokens(s.tokens, 3)
    assert len(ids) == 3 and np.all(np.diff(frac) <= 0) and frac.sum() <= 1
    fig, ax = plt.subplots()
    cell_plots.draw_cells(ax, s, lambda t: f"t{t}", k=3, anchor_names=["a", "b", "c"])
    cell_plots.draw_disagreement(ax, s)
    png = cell_plots.figure_png(fig)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    html = cell_plots.slice_explorer_html({"plane A": [("z1", png), ("z2", png)], "plane B": [("z1", png)]}, uid="t1")
    assert html.count('type="range"') == 1 and html.count("data:image/png;base64,") == 3
    assert "http" not in html  # self-contained: no CDN, no network
    with pytest.raises(ValueError, match="non-empty"):
        cell_plots.slice_explorer_html({"a": []})


def test_cells_in_ball_counts_only_the_reachable_disk():
    # a plane at distance 3 from the origin in R^3: z = 3; the ball of radius 5 meets it in a disk of radius 4
    pl = slices.Plane(origin=torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64),
                      basis=torch.eye(3, dtype=torch.float64)[:2], scale=1.0, anchors_uv=np.zeros((0, 2)))  # fmt: skip
    c, rho = pl.ball_disk(5.0)
    assert np.allclose(c, [-1.0, 2.0]) and rho == pytest.approx(4.0)
    assert pl.ball_disk(3.0) is None and pl.ball_disk(2.0) is None  # the plane misses (or touches) the ball
    # three tokens: x wins for x > |y|, -x for x < -|y|, and a third whose cell starts at x + 10: far outside
    W = torch.tensor([[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
    b = torch.tensor([0.0, 0.0, -10.0])
    got = slices.cells_in_ball(pl, W, b, 5.0, resolution=101)
    assert got["tokens"].tolist() == [0, 1] and got["n_cells"] == 2  # token 2 wins only at x > 10, beyond the disk
    assert got["pixels"] == pytest.approx(np.pi / 4 * 101**2, rel=0.03)  # the disk fills π/4 of its square
    assert slices.argmax_slice(pl, W, b, resolution=50, extent=20.0).n_cells_plane == 3  # the whole plane has 3
    assert slices.cells_in_ball(pl, W, b, 2.0)["n_cells"] == 0
    with pytest.raises(ValueError, match="r"):
        slices.cells_in_ball(pl, W, b, 0.0)
