"""Screenshots of the web client's review and analysis board for docs/web/, at 1280x800 and
390x844. Run by hand after changing them:

    .venv/bin/python tests/client_web/make_review_screenshots.py

(Not a test: it writes files. Two protocol clients play a short game: X wins after O leaves a
three open; the review is shown at O's missed threat, then the analysis board from there.)
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[2]))

import web_helpers  # noqa: E402
from make_screenshots import OUT, SIZES, snap  # noqa: E402
from test_web_review import finished_game  # noqa: E402
from web_helpers import Page  # noqa: E402


async def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    async with web_helpers.browser() as chromium:
        with tempfile.TemporaryDirectory() as tmp:
            async with web_helpers.running_server(Path(tmp) / "q.db") as running:
                game = await finished_game(running)
                for size, (width, height) in SIZES.items():
                    tab = await Page.open(chromium, f"{running.http_url}/#review={game}",
                                          width, height)
                    page = tab.page
                    await page.wait_for_selector("#review-moves .move >> nth=6")
                    await page.click("#review-moves .move >> nth=5")
                    await page.mouse.move(0, 0)
                    await snap(page, OUT / f"review-{size}.png")
                    await page.click("#review-analyse")
                    await page.wait_for_function(
                        "() => document.querySelector('#analysis-verdict').textContent"
                        ".startsWith('X wins')")
                    await page.mouse.move(0, 0)
                    await snap(page, OUT / f"analysis-{size}.png")
                    await page.context.close()
    print(f"screenshots in {OUT}")


if __name__ == "__main__":
    asyncio.run(main())
