"""Lexicon benchmark: build TWL06 from its word list, open the file, look words up."""

from __future__ import annotations

import os
import tempfile

from common import DATA, ROOT, header, median_time

from anchor.engine import Lexicon, Ruleset


def main() -> None:
    header("lexicon: TWL06 (178,691 words)")
    rules = Ruleset.load("english")
    words = (DATA / "wordlists" / "twl06.txt").read_text().split()
    build = median_time(lambda: Lexicon.build(words, rules), runs=5)
    lexicon = Lexicon.build(words, rules)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "twl06.kwg")
        lexicon.save(path)
        opened = median_time(lambda: Lexicon.open(path, rules).close(), runs=20)
    sample = words[::97]
    lookup = median_time(lambda: [lexicon.contains(w) for w in sample], runs=5) / len(sample)
    iterate = median_time(lambda: sum(1 for _ in lexicon), runs=3)
    magpie = Lexicon.open(DATA / "kwg" / "TWL06.kwg", rules)
    default = ROOT / "dictionaries" / "build" / "english.kwg"
    print(f"build (median of 5)      {build:8.3f} s")
    print(f"nodes                    {lexicon.node_count:8d}")
    print(f"file size                {len(lexicon.to_bytes()):8d} bytes")
    print(f"open + check (median/20) {opened * 1e3:8.2f} ms")
    print(f"contains (per word)      {lookup * 1e6:8.2f} µs")
    print(f"iterate all words        {iterate:8.3f} s")
    print(f"MAGPIE TWL06.kwg nodes   {magpie.node_count:8d} (DAWG + GADDAG)")
    if default.exists():
        d = Lexicon.open(default, rules)
        print(f"default english.kwg      {len(d):8d} words, {d.node_count} nodes")


if __name__ == "__main__":
    main()
