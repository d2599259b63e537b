"""A real browser for the dashboard tests: Debian's chromium driven by Playwright.

Never `playwright install`: the browser is the system's (`/usr/bin/chromium`,
which scripts/test.sh installs when missing).  Every page a test opens
records console errors and uncaught exceptions; a test asserts there are none.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import attrs
from playwright.sync_api import Browser, ConsoleMessage, Page, ViewportSize, sync_playwright

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
DESKTOP: ViewportSize = {"width": 1280, "height": 900}
#: An iPhone 12-15's CSS viewport: no page may be wider.
PHONE: ViewportSize = {"width": 390, "height": 844}
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def chromium(*extra_args: str) -> Iterator[Browser]:
    """A headless chromium for the session (with `extra_args` on its command line)."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=[*ARGS, *extra_args]
        )
        yield browser
        browser.close()


@attrs.define
class Tab:
    """A page of the browser with the console errors it logged."""

    page: Page
    base: str
    errors: list[str] = attrs.field(factory=list)

    @classmethod
    def open(cls, browser: Browser, base: str, *, phone: bool = False, dark: bool = False) -> Tab:
        """A new tab (its own context: cookies and storage) on the dashboard at `base`: a
        desktop window, or a phone's 390 px wide screen; in dark mode if `dark`."""
        context = browser.new_context(
            viewport=PHONE if phone else DESKTOP,
            is_mobile=phone,
            has_touch=phone,
            color_scheme="dark" if dark else "light",
        )
        tab = cls(page=context.new_page(), base=base)
        tab.page.on("console", lambda message: tab.note(message))
        tab.page.on(
            "response",
            lambda response: (
                response.status >= 400 and tab.errors.append(f"{response.status} {response.url}")
            ),
        )
        tab.page.on("pageerror", lambda error: tab.errors.append(f"pageerror: {error}"))
        tab.page.set_default_timeout(15_000)
        return tab

    def note(self, message: ConsoleMessage) -> None:
        """Keep a console message if it is an error."""
        if message.type == "error":
            self.errors.append(f"console: {message.text}")

    def go(self, path: str) -> Page:
        """Open a dashboard path and wait until it has loaded."""
        response = self.page.goto(self.base + path, wait_until="load")
        assert response is not None, path
        assert response.status == 200, (path, response.status)
        return self.page

    def shot(self, name: str) -> Path:
        """Save a full-page screenshot to test-artifacts/dashboard-NAME.png."""
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"dashboard-{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def close(self) -> None:
        """Close the tab's context."""
        self.page.context.close()
