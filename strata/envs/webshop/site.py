"""WebShop's text site: the pages, the actions on them, and the reward on ``Buy Now``.

A `ShopSession` is one shopper on the site (WebShop's ``WebAgentTextEnv`` in its ``text`` observation mode,
which verl-agent and AgentGym train on). Pages render as WebShop's do, their visible texts joined by
`` [SEP] ``:

- search: ``WebShop [SEP] Instruction: [SEP] <goal> [SEP] Search``;
- results (10 a page, at most 50): ``Back to Search``, ``Page p (Total results: n)``, ``< Prev`` from page 2,
  ``Next >`` always (past the last page the list is empty, as in WebShop), then each product's ASIN, title and
  price;
- item: ``Back to Search``, ``< Prev``, each option's name and values, the title, ``Price: ...``,
  ``Rating: N.A.``, ``Description``, ``Features``, ``Reviews``, ``Buy Now``;
- description / features / reviews: ``Back to Search``, ``< Prev`` and the text (reviews are always empty:
  WebShop never loads them).

Actions are ``search[keywords]`` (on any page, as WebShop allows) and ``click[button]`` with a button of the
current page (lower-case, as `available_actions` lists them). Anything else is invalid: the page stays, the
reward is 0 and the episode goes on, as in WebShop. Choosing an option and going back to the results forgets
the options, as WebShop's results page does.

The one page rendered differently: after ``Buy Now`` WebShop's thank-you page also prints its hidden debug
fields (the goal among them); here it is ``Thank you for shopping with us! [SEP] Your score (min 0.0, max 1.0)
[SEP] <reward>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from strata.envs.webshop.catalog import Catalog, Goal, Product
from strata.envs.webshop.reward import NounTagger, RewardTerms, purchase_reward
from strata.envs.webshop.search import SearchIndex

SEP = " [SEP] "
PER_PAGE = 10
BACK, NEXT, PREV, BUY = "back to search", "next >", "< prev", "buy now"
SUB_PAGES = ("description", "features", "reviews")
ACTION = re.compile(r"(.+)\[(.+)\]", re.DOTALL)


@dataclass(frozen=True)
class ShopStep:
    observation: str
    reward: float
    done: bool
    valid: bool  # False: WebShop ignored the action (the page did not change)
    terms: RewardTerms | None = None  # set on a purchase


@dataclass
class _Page:
    kind: str = "search"  # search, results, item, description, features, reviews, done
    keywords: str = ""
    number: int = 1
    results: list[str] = field(default_factory=list)  # the search's ASINs (up to 50)
    asin: str | None = None
    options: dict[str, str] = field(default_factory=dict)  # option name -> chosen value


class ShopSite:
    """The catalogue, its search index and the noun tagger the reward uses; sessions share them."""

    def __init__(self, catalog: Catalog, nouns: NounTagger, index: SearchIndex | None = None) -> None:
        self.catalog = catalog
        self.nouns = nouns
        self.index = index or SearchIndex(catalog.products.values())

    def session(self, goal_index: int) -> ShopSession:
        return ShopSession(self, self.catalog.goals[goal_index])


class ShopSession:
    """One shopper working on ``goal``, from the search page to ``Buy Now``."""

    def __init__(self, site: ShopSite, goal: Goal) -> None:
        self.site = site
        self.goal = goal
        self.page = _Page()
        self.observation = self._render()

    # -- what the shopper sees -------------------------------------------------------------------------------

    @property
    def has_search_bar(self) -> bool:
        return self.page.kind == "search"

    def clickables(self) -> list[str]:
        """The page's buttons, product links and option values, lower-case, in page order."""
        page = self.page
        if page.kind == "search":
            return ["search"]
        if page.kind == "results":
            return [BACK, *([PREV] if page.number > 1 else []), NEXT, *(a.lower() for a in self._shown())]
        if page.kind == "item":
            values = [v for values in self._product().options.values() for v in values]
            return list(dict.fromkeys([BACK, PREV, *SUB_PAGES, BUY, *values]))
        if page.kind in SUB_PAGES:
            return [BACK, PREV]
        return []

    def available_actions(self) -> list[str]:
        """What the prompt lists: ``search[<your query>]`` where there is a search bar, and a ``click[...]``
        for every clickable but the search button (which WebShop refuses as a click)."""
        search = ["search[<your query>]"] if self.has_search_bar else []
        return search + [f"click[{c}]" for c in self.clickables() if c != "search"]

    # -- acting ----------------------------------------------------------------------------------------------

    def step(self, action: str) -> ShopStep:
        if self.page.kind == "done":
            raise RuntimeError("step() after Buy Now: the episode is over")
        parsed = ACTION.match(action.strip())
        name, argument = (parsed.group(1).strip(), parsed.group(2).strip().lower()) if parsed else ("", "")
        if name == "search" and argument:
            self._search(argument, 1)
        elif name == "click" and argument == BUY and argument in self.clickables():
            terms = self._buy()
            self.observation = SEP.join(["Thank you for shopping with us!", "Your score (min 0.0, max 1.0)",
                                         str(terms.reward)])
            return ShopStep(self.observation, terms.reward, True, True, terms)
        elif name == "click" and argument != "search" and argument in self.clickables():
            self._click(argument)
        else:
            return ShopStep(self.observation, 0.0, False, False)
        self.observation = self._render()
        return ShopStep(self.observation, 0.0, False, True)

    def _search(self, keywords: str, number: int) -> None:
        self.page = _Page("results", keywords, number, self.site.index.search(keywords))

    def _buy(self) -> RewardTerms:
        """End the episode on the item page's product with the options chosen, and score the purchase."""
        self.page.kind = "done"
        product = self._product()
        return purchase_reward(product, self.site.catalog.prices[product.asin], self.page.options, self.goal,
                               self.site.nouns)

    def _click(self, button: str) -> None:
        """Go where ``button`` (a clickable of the page other than Buy Now) leads, or choose an option value."""
        page = self.page
        if button == BACK:
            self.page = _Page()
        elif button in (NEXT, PREV) and page.kind == "results":
            page.number += 1 if button == NEXT else -1
        elif button == PREV and page.kind == "item":
            self._search(page.keywords, page.number)  # WebShop re-renders the results: the options are forgotten
        elif button == PREV:
            page.kind = "item"
        elif button in SUB_PAGES:
            page.kind = button
        elif page.kind == "results":
            page.kind, page.asin = "item", next(a for a in self._shown() if a.lower() == button)
        else:  # an option value: the last option that offers it, as WebShop's click lookup resolves it
            name = [n for n, values in self._product().options.items() if button in values][-1]
            page.options[name] = button

    # -- rendering -------------------------------------------------------------------------------------------

    def _shown(self) -> list[str]:
        start = (self.page.number - 1) * PER_PAGE
        return self.page.results[start:start + PER_PAGE]

    def _product(self) -> Product:
        return self.site.catalog.products[self.page.asin]

    def _render(self) -> str:
        page, instruction = self.page, self.goal.instruction_text
        if page.kind == "search":
            return SEP.join(["WebShop", "Instruction:", instruction, "Search"])
        texts = ["Instruction:", instruction, "Back to Search"]
        if page.kind == "results":
            texts += [f"Page {page.number} (Total results: {len(page.results)})",
                      *(["< Prev"] if page.number > 1 else []), "Next >"]
            for asin in self._shown():
                product = self.site.catalog.products[asin]
                texts += [asin, product.title, product.price_tag]
        elif page.kind == "item":
            product = self._product()
            texts.append("< Prev")
            for name, values in product.options.items():
                texts += [name, *values]
            texts += [product.title, f"Price: {product.price_tag}", "Rating: N.A.", "Description", "Features",
                      "Reviews", "Buy Now"]
        else:
            product = self._product()
            texts.append("< Prev")
            texts += {"description": [product.description], "features": list(product.bullet_points),
                      "reviews": []}[page.kind]
        return SEP.join(text.strip() for text in texts if text.strip())
