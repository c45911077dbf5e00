"""WebShop search: how often the project's BM25 (`strata.envs.webshop.search`) returns Lucene's top 10.

WebShop searches with pyserini, which is Anserini's Lucene: its DefaultEnglishAnalyzer (Porter stemming, Lucene's
English stop words) and BM25 with k1 = 0.9, b = 0.4, over one document a product. This benchmark indexes the same
documents (`document_text`) with that analyzer and similarity in Lucene itself and compares the top 10 of both
engines for every query: the share of Lucene's top 10 the project also returns in its top 10, how often the two
lists are equal (order included), and how often the first result is the same.

Lucene runs in a separate Python that has pyjnius and Anserini's jar, so the project's environment gets neither:

    python3 -m venv /tmp/lucene && /tmp/lucene/bin/pip install pyjnius
    pip download --no-deps pyserini==0.17.0 -d /tmp/pyserini && unzip -q -o /tmp/pyserini/*.whl -d /tmp/pyserini
    .venv/bin/python benchmarks/bench_webshop_search.py --lucene-python /tmp/lucene/bin/python \
        --anserini-jar /tmp/pyserini/pyserini/resources/jars/anserini-0.14.3-fatjar.jar     # Java 11+ (JAVA_HOME)

The catalogue is `strata make-webshop`'s generated one unless ``--data-path`` names WebShop's data folder; the
queries are the goals' instructions and search queries and the products' titles (``--queries`` of each). Not a
test: the numbers depend on the catalogue.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

TOP = 10


def lucene_rankings(documents: list[tuple[str, str]], queries: list[str], jar: str) -> list[list[str]]:
    """Lucene's top ``TOP`` ids for each query (runs in the Lucene Python; imports only jnius)."""
    import jnius_config

    jnius_config.set_classpath(jar)
    from jnius import autoclass, cast

    analyzer = autoclass("io.anserini.analysis.DefaultEnglishAnalyzer").newDefaultInstance()
    directory = autoclass("org.apache.lucene.store.ByteBuffersDirectory")()
    similarity = autoclass("org.apache.lucene.search.similarities.BM25Similarity")(0.9, 0.4)
    config = autoclass("org.apache.lucene.index.IndexWriterConfig")(analyzer).setSimilarity(similarity)
    writer = autoclass("org.apache.lucene.index.IndexWriter")(directory, config)
    document_class = autoclass("org.apache.lucene.document.Document")
    string_field = autoclass("org.apache.lucene.document.StringField")
    text_field = autoclass("org.apache.lucene.document.TextField")
    stored = autoclass("org.apache.lucene.document.Field$Store")
    for doc_id, text in documents:
        document = document_class()
        document.add(string_field("id", doc_id, stored.YES))
        document.add(text_field("contents", text, stored.NO))
        writer.addDocument(document)
    writer.close()
    reader = cast("org.apache.lucene.index.IndexReader", autoclass("org.apache.lucene.index.DirectoryReader").open(
        directory))
    searcher = autoclass("org.apache.lucene.search.IndexSearcher")(reader)
    searcher.setSimilarity(similarity)
    generator = autoclass("io.anserini.search.query.BagOfWordsQueryGenerator")()
    rankings = []
    for query in queries:
        hits = searcher.search(generator.buildQuery("contents", analyzer, query), TOP).scoreDocs
        rankings.append([searcher.doc(hit.doc).get("id") for hit in hits])
    return rankings


def agreement(ours: list[list[str]], lucene: list[list[str]]) -> dict[str, float]:
    """Mean share of Lucene's top 10 in ours, share of equal lists and of equal first results (queries Lucene
    answers)."""
    pairs = [(mine, theirs) for mine, theirs in zip(ours, lucene, strict=True) if theirs]
    return {
        "queries": len(pairs),
        "top10_overlap": sum(len(set(mine) & set(theirs)) / len(theirs) for mine, theirs in pairs) / len(pairs),
        "same_list": sum(mine == theirs for mine, theirs in pairs) / len(pairs),
        "same_first": sum(mine[:1] == theirs[:1] for mine, theirs in pairs) / len(pairs),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lucene-python", help="a Python with pyjnius")
    parser.add_argument("--anserini-jar", help="Anserini's fat jar (pyserini's resources/jars)")
    parser.add_argument("--data-path", help="WebShop's data folder (default: a generated 1,000-product catalogue)")
    parser.add_argument("--queries", type=int, default=300, help="goals whose instruction and query are searched")
    parser.add_argument("--lucene-side", action="store_true", help=argparse.SUPPRESS)  # the Lucene process's part
    args = parser.parse_args(argv)
    if args.lucene_side:
        request = json.load(sys.stdin)
        json.dump(lucene_rankings(request["documents"], request["queries"], request["jar"]), sys.stdout)
        return 0
    if not (args.lucene_python and args.anserini_jar):
        parser.error("give --lucene-python and --anserini-jar (see the module docstring)")

    from strata.envs.webshop.catalog import load_catalog
    from strata.envs.webshop.generate import write_catalog
    from strata.envs.webshop.search import SearchIndex, document_text

    folder = args.data_path or write_catalog(Path(tempfile.mkdtemp(prefix="bench-search-")), 1000, 0)
    catalog = load_catalog(folder, goals="human")  # human instructions: how people phrase a search
    goals = catalog.goals[: args.queries]
    products = list(catalog.products.values())
    titles = [product.title for product in products[: args.queries]]
    queries = [goal.instruction_text for goal in goals] + [goal.query for goal in goals] + titles
    index = SearchIndex(products)
    ours = [index.search(query, TOP) for query in queries]
    request = {"documents": [(p.asin, document_text(p)) for p in products], "queries": queries,
               "jar": args.anserini_jar}
    done = subprocess.run([args.lucene_python, __file__, "--lucene-side"], input=json.dumps(request),
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"error: the Lucene process failed (exit {done.returncode}):\n{done.stderr[-2000:]}", file=sys.stderr)
        return 1
    lucene = json.loads(done.stdout)
    print(f"{len(products)} products ({'WebShop data' if args.data_path else 'generated catalogue'}); "
          f"top {TOP} of the project's BM25 against Lucene's (Anserini's DefaultEnglishAnalyzer, BM25 0.9/0.4)")
    print(f"{'queries':<22} {'n':>5} {'distinct lists':>15} {'top-10 overlap':>15} {'same list':>10} "
          f"{'same first':>11}")
    parts = {"instructions": slice(0, len(goals)), "goal queries": slice(len(goals), 2 * len(goals)),
             "product titles": slice(2 * len(goals), None), "all": slice(None)}
    for name, part in parts.items():
        result = agreement(ours[part], lucene[part])
        distinct = len({tuple(ranking) for ranking in lucene[part]})
        print(f"{name:<22} {result['queries']:>5} {distinct:>15} {result['top10_overlap']:>15.3f} "
              f"{result['same_list']:>10.3f} {result['same_first']:>11.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
