"""The inventory of a built page's figures and tables (book/_ext/site_inventory.py), on a page written here."""

from __future__ import annotations

import site_inventory

PAGE = """<html><body><article class="bd-article">
<figure class="align-default" id="fig-cramming-n50"><img src="a.png"/>
<figcaption><p><span class="caption-number">Fig. 12 </span><span class="caption-text">n50 against m with 95 % intervals</span></p></figcaption></figure>
<table class="table"><thead><tr><th>target kind</th><th>C_exp (tokens/vector) [95 % CI]</th></tr></thead>
<tbody><tr><td>natural</td><td>14.8</td></tr></tbody></table>
<table><caption><span class="caption-number">Table 2 </span><span class="caption-text">The paper's Table 1</span></caption>
<tr><th>support model</th><th>Pythia-160M</th></tr></table>
<figure id="inner"><table><tr><td>a table inside a figure is not listed</td></tr></table><figcaption>x</figcaption></figure>
<script>var t = "<table>";</script>
</article></body></html>"""


def test_figures_and_tables_are_listed_with_their_names(tmp_path) -> None:
    path = tmp_path / "03_x.html"
    path.write_text(PAGE)
    items = site_inventory.page_inventory(path)
    assert [(i.kind, i.label) for i in items] == [
        ("figure", "fig-cramming-n50"),
        ("table", ""),
        ("table", ""),
        ("figure", "inner"),
    ]
    assert items[0].caption == "n50 against m with 95 % intervals"  # the caption number is left out
    assert items[1].header == ["target kind", "C_exp (tokens/vector) [95 % CI]"]
    assert items[2].caption == "The paper's Table 1" and items[2].header == ["support model", "Pythia-160M"]


def test_an_item_is_found_by_label_caption_or_header_and_digits_do_not_matter(tmp_path) -> None:
    path = tmp_path / "lab_x.html"
    path.write_text(PAGE.replace("fig-cramming-n50", "fig-other").replace("95 %", "90 %"))
    items = site_inventory.page_inventory(path)
    assert site_inventory.find(
        {"kind": "figure", "label": "fig-cramming-n50", "caption": "n50 against m with 95 % intervals"}, items
    )
    assert site_inventory.find({"kind": "figure", "label": "fig-gone", "caption": "another caption"}, items) is None
    assert site_inventory.find(
        {"kind": "table", "caption": "", "header": ["target kind", "C_exp (tokens/vector) [99 % CI]"]}, items
    )
    assert site_inventory.find({"kind": "table", "caption": "", "header": ["target kind", "slope"]}, items) is None
    assert site_inventory.find({"kind": "table", "caption": "Table 9: The paper's Table 1", "header": []}, items)
