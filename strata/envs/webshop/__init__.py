"""WebShop (Yao et al., 2022), the StraTA paper's second benchmark: its catalogue and goals (`catalog`), search
(`search`), text site (`site`), purchase reward (`reward`, `nouns`), a generated catalogue (`generate`) and
scripted shoppers (`policies`). Pure Python: no Flask, no JVM."""
