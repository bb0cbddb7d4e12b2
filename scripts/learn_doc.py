"""Prints docs/learn.md from the studio's Learn lessons (scripts/learn-doc runs it): the text of
every page as --dump-state recorded it (learn.transcript, then the answered last page) and the
glossary's entries from app/studio/learn/learn_tour.cpp.
Usage: learn_doc.py DUMP_DIR LEARN_TOUR_CPP   (DUMP_DIR holds learn1.json .. learn3.json)"""
import json
import re
import sys

HEAD = """# Learn: three lessons in the studio

The studio's **Learn** tab (the first tab) teaches what STOF Studio exists to show, with the
real views and their live numbers: each page sets up the views (the mask, the block size, the
layer), explains what they show, and the last page asks a question you answer by changing one
thing in a view; the page sees the change and explains the answer with the new numbers. The
**Glossary** button beside the tabs opens the [glossary](#glossary) from every view.

This page is written by `scripts/learn-doc` from the studio itself: the text is what the
lessons print, page by page, with the numbers they showed on {device}. {kind} On a GPU the
studio predicts for that GPU, and the ladder of lesson 2 can be measured (**Measure on the
GPU**). Run a lesson from start to end, answer included, with

```sh
xvfb-run -a -s "-screen 0 1600x900x24" build/app/stof-studio --learn N --screenshot learn-N.png
```

(`--learn-page P` stops on page P instead; `--dump-state` writes every page's text under
`learn.transcript`). The lessons are `app/studio/learn/learn_tour.cpp`; the GUI test
`tests/app/studio_views_test.sh` runs all three.
"""
TITLES = {1: "1. Block-sparse layouts and wasted work", 2: "2. Softmax recomposition: U, SD, SDF, F",
          3: "3. Fusion trade-offs: when fusing pays"}
# (page or None for the answered end, image, caption)
SHOTS = {1: [(None, "learn-1.png", "Lesson 1 answered")],
         2: [(1, "learn-2-diagram.png", "Lesson 2, page 1: the four rungs and what each sends through DRAM"),
             (None, "learn-2.png", "Lesson 2 answered, with the live ladder")],
         3: [(1, "learn-3-segments.png", "Lesson 3, page 1: the layer's segments, from the Fusion tab"),
             (None, "learn-3.png", "Lesson 3 answered")]}


def glossary(cpp):
    src = open(cpp).read()
    a = src.index("const std::vector<GlossaryEntry>& Glossary()")
    body = src[a:src.index("return kTerms;", a)]
    lit = r'"(?:[^"\\]|\\.)*"'
    out = ["## Glossary", "",
           "The studio's Glossary window (`Glossary()` in `app/studio/learn/learn_tour.cpp`).", ""]
    for term, text in re.findall(r"\{(" + lit + r")\s*,\s*((?:" + lit + r"\s*)+)\}", body):
        words = "".join(json.loads(p) for p in re.findall(lit, text))
        out.append(f"- **{json.loads(term)}**: {words}")
    return "\n".join(out) + "\n"


def main():
    dumps, cpp = sys.argv[1], sys.argv[2]
    states = {n: json.load(open(f"{dumps}/learn{n}.json")) for n in (1, 2, 3)}
    device = states[2]["device"]
    measured = any(r["measured"] for r in states[2]["lab"]["ladder"]["rungs"])
    kind = ("Times and bytes are measured where the page says so, predicted elsewhere."
            if measured else "Every time and byte count is a **prediction** of the analytical "
            "models (the layout counts of lesson 1 are exact).")
    out = [HEAD.format(device=device + (" (" + states[2]["device_note"] + ")" if states[2]["device_note"] else ""),
                       kind=kind)]
    for n, s in states.items():
        learn = s["learn"]
        pages = learn["transcript"] + [learn["page"]]
        out.append(f"## {TITLES[n]}\n")
        for p in pages:
            out.append(f"### Page {p['page']}: {p['title']}\n")
            out.extend(para + "\n" for para in p["paragraphs"])
            if p["question"]:
                out.append(f"**Question.** {p['question']}\n")
                out.append(f"**Answered** (the change `--learn {n}` makes). {p['answer']}\n")
            for page, image, caption in SHOTS[n]:
                if page == p["page"] or (page is None and p is pages[-1]):
                    out.append(f"![{caption}](images/{image})\n")
    out.append(glossary(cpp))
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
