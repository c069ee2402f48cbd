"""The atlas table of docs/benchmarks.md (bench/atlas_scale.py, published by
`bench/publish.py --only atlas`): well formed in `make test`; under `make bench-check`
re-measured at the smaller published size and compared by ratios, so that a busy machine
does not fail it but a page twice as big or a render ten times slower does."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import atlas_scale  # noqa: E402
import publish  # noqa: E402


def published_rows() -> dict[int, atlas_scale.Published]:
    text = publish.README.read_text(encoding="utf-8")
    section = publish.read_section(text, publish.ATLAS)
    assert section is not None, "docs/benchmarks.md has no atlas markers"
    return atlas_scale.published(section)


def test_the_published_atlas_table_has_a_well_formed_row_per_size() -> None:
    rows = published_rows()

    assert sorted(rows) == sorted(publish.ATLAS_SIZES), rows
    for row in rows.values():
        assert row.page_mib > 0 and row.write_s > 0 and row.load_s > 0, row
        assert 0 < row.draw_ms <= row.first_render_ms, row
    small, big = (rows[n] for n in sorted(rows))
    assert small.page_mib < big.page_mib, (small, big)


def test_a_table_section_writes_is_read_back_unchanged_and_a_malformed_row_is_not() -> None:
    scales = [
        atlas_scale.Scale(10000, 6_600_000, 13.931, 745, 454, 10.764, 10000),
        atlas_scale.Scale(1000, 660_000, 0.981, 97, 65, 1.642, 1000),
    ]
    text = atlas_scale.section(scales)

    rows = atlas_scale.published(text)

    assert rows == {
        1000: atlas_scale.Published(1000, 0.6, 0.98, 97, 65, 1.64),
        10000: atlas_scale.Published(10000, 6.3, 13.93, 745, 454, 10.76),
    }
    # The control: a row missing a figure is not read as one.
    assert atlas_scale.published(text.replace("| 97 ms ", "| ")) == {10000: rows[10000]}


@pytest.mark.bench_check
def test_the_published_atlas_table_is_what_a_run_at_the_smaller_size_measures() -> None:
    if not Path(atlas_scale.CHROMIUM).is_file():
        pytest.skip(f"no Chromium at {atlas_scale.CHROMIUM}")
    expected = published_rows()[publish.TEST_ATLAS_N]

    measured = atlas_scale.measure_checked(publish.TEST_ATLAS_N)

    per_memory = measured.page_bytes / measured.n
    published_per_memory = expected.page_mib * 2**20 / expected.n
    assert abs(per_memory / published_per_memory - 1) <= publish.ATLAS_PAGE_TOLERANCE, (
        f"{per_memory:.0f} bytes per memory measured, {published_per_memory:.0f} published"
    )
    ratio = max(measured.first_render_ms, 1) / expected.first_render_ms
    tolerance = publish.ATLAS_RENDER_TOLERANCE
    assert 1 / tolerance <= ratio <= tolerance, (
        f"first render {measured.first_render_ms} ms measured, "
        f"{expected.first_render_ms} ms published"
    )
