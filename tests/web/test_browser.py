"""What a person sees, in headless chromium against `cogworker serve` and a real worker."""

from __future__ import annotations

import json
import time
from pathlib import Path

import redis
from playwright.sync_api import expect

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.app.web import bulk
from cogworker.domain import memory
from tests.app.helpers import Workers, process_hash, wait_for_fetches, wait_for_processes
from tests.support.processes import wait_until
from tests.support.sets import add_to_set
from tests.web import jobs
from tests.web.browser import Tab
from tests.web.helpers import schedule_entry
from tests.web.scenario import PAGES, WEB_APP, seed


def _memory_history(raw: redis.Redis, identity: str) -> None:
    """A day of memory samples with a gap, as a worker running for 24 h would have left."""
    now = time.time()
    first = memory.first_slot(now)
    members = {}
    for index in range(memory.SLOTS - 1):
        if 40 <= index < 52:
            continue  # Redis was away for three hours: the line breaks
        kib = 60_000 + (index * 523) % 9_000 + (index // 10) * 1_200
        members[memory.member_of(first + index * memory.SAMPLE_SECONDS, kib)] = first + index * 900
    members[memory.member_of(first + 20 * 900, 75_000)] = (
        first + 20 * 900
    )  # a lone peak stays visible
    raw.zadd(keys.memory_history(identity), members)


def test_every_page_renders_without_console_errors(
    tab: Tab, workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """Each page loads under its CSP with no console error; a screenshot of each is saved."""
    seeded = seed(workers, enqueuer, raw)
    _memory_history(raw, seeded.identity)
    raw.hset(keys.PERIODIC_SCHEDULE, "nightly-report", schedule_entry("nightly-report"))
    shots: list[Path] = []
    for name, path in PAGES.items():
        page = tab.go(path)
        expect(page.locator("h1")).to_be_visible()
        if name == "overview":
            page.wait_for_function("() => !!Chart.getChart(document.getElementById('cw-chart'))")
        shots.append(tab.shot(name))
    for name, jid in (("job-dead", seeded.dead), ("job-retrying", seeded.retrying)):
        tab.go(f"/job?jid={jid}")
        expect(tab.page.locator(".cw-timeline li").first).to_be_visible()
        shots.append(tab.shot(name))
    for name, path in (("job-running", f"/job?jid={seeded.running}"),
                       ("history", f"/history?jid={seeded.dead}")):  # fmt: skip
        tab.go(path)
        shots.append(tab.shot(name))
    assert all(shot.stat().st_size > 10_000 for shot in shots)


def test_the_metrics_page_sorts_and_opens_a_class_with_its_charts(
    tab: Tab, workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """Jobs run by a real worker: a click on a column sorts the Metrics page by it, a click
    on a class opens its view, both charts drawn from its runs, and its last runs listed."""
    runs = len(seed(workers, enqueuer, raw).done)
    done = f"{jobs.Done.__module__}.{jobs.Done.__qualname__}"
    page = tab.go("/job-metrics")
    page.locator("thead a[data-sort=runs]").click()
    expect(page.locator('th[aria-sort="descending"]')).to_contain_text("Runs")
    expect(page.locator("tbody tr").first.locator("td").first).to_have_text(done)
    page.get_by_role("link", name=done, exact=True).click()
    expect(page.locator("h1")).to_have_text(f"Metrics of {done}")
    drawn = (
        "() => ['cw-class-timeline', 'cw-class-histogram'].map((id) => {"
        " const chart = Chart.getChart(document.getElementById(id));"
        " return chart ? chart.data.datasets[0].data.reduce((a, b) => a + b, 0) : null; })"
    )
    page.wait_for_function(f"() => ({drawn})().every((runs) => runs !== null)")
    assert page.evaluate(drawn) == [runs, runs]
    expect(page.locator("#runs tbody tr")).to_have_count(runs)
    page.get_by_role("link", name="72h").click()
    expect(page.locator('.cw-periods a[aria-current="true"]')).to_have_text("72h")
    page.wait_for_function(f"() => ({drawn})().every((runs) => runs !== null)")
    tab.shot("job-metrics-class")


def test_a_poll_updates_the_page_and_keeps_one_chart(
    tab: Tab, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """With a 2 s interval the stat cards follow Redis, and the chart is the same instance."""
    page = tab.go("/")
    page.select_option("#cw-poll-interval", "2")
    page.evaluate(
        "() => { window.firstChart = Chart.getChart(document.getElementById('cw-chart')); }"
    )
    enqueuer.enqueue(jobs.Parked)
    enqueued = page.locator(".card-link", has_text="Enqueued").locator(".card-value")
    expect(enqueued).to_have_text("1", timeout=10_000)
    same = page.evaluate(
        "() => Chart.getChart(document.getElementById('cw-chart')) === window.firstChart"
    )
    assert same is True
    expect(page.locator("#cw-redis")).to_have_count(1)  # the Redis grid came out of band, once


def test_sparkline_readout_on_hover_survives_a_poll_and_works_from_the_keyboard(
    tab: Tab, workers: Workers, raw: redis.Redis
) -> None:
    """Hovering shows the nearest sample's value and time; a poll keeps it; arrows move it."""
    worker = workers.start(WEB_APP)
    (identity,) = wait_for_processes(raw, 1, worker)
    _memory_history(raw, identity)
    page = tab.go("/workers")
    spark = page.locator(".cw-spark").first
    box = spark.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] * 0.2, box["y"] + box["height"] / 2)
    tip = spark.locator(".cw-spark-tip")
    expect(tip).to_be_visible()
    expect(tip).to_contain_text("M · ")
    tab.shot("workers-sparkline-hover")
    with page.expect_response(lambda response: "/workers" in response.url):
        page.evaluate("() => htmx.trigger('#cw-live', 'cw-poll')")
    expect(page.locator(".cw-spark").first.locator(".cw-spark-tip")).to_be_visible()
    page.mouse.move(0, 0)
    page.locator(".cw-spark").first.focus()
    readout = page.locator(".cw-spark").first.locator(".cw-spark-tip")
    expect(readout).to_be_visible()
    before = readout.text_content()
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    expect(readout).not_to_have_text(before or "")
    expect(page.locator("#cw-spark-readout")).not_to_be_empty()


def test_quiet_then_resume_round_trips_on_a_real_worker(
    tab: Tab, workers: Workers, raw: redis.Redis
) -> None:
    """Quiet from the card; the card says quiet once the worker has; Resume undoes it."""
    worker = workers.start(WEB_APP)
    (identity,) = wait_for_processes(raw, 1, worker)
    page = tab.go("/workers")
    page.select_option("#cw-poll-interval", "2")
    page.get_by_role("button", name="Quiet", exact=True).click()
    expect(page.locator(".cw-notice")).to_have_text("Asked to quiet 1 process.")
    wait_until(lambda: process_hash(raw, identity).get("quiet") == "true", message=worker.log_tail)
    expect(page.locator(".cw-process .tag", has_text="quiet")).to_be_visible(timeout=10_000)
    page.get_by_role("button", name="Resume").click()
    wait_until(lambda: process_hash(raw, identity).get("quiet") == "false", message=worker.log_tail)
    expect(page.get_by_role("button", name="Quiet", exact=True)).to_be_visible(timeout=10_000)


def test_pause_then_resume_a_queue_a_real_worker_serves(
    tab: Tab, workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """Pause on the Queues page: the badge shows and the worker leaves the queue's jobs;
    Resume: they run."""
    worker = workers.start(WEB_APP)
    wait_for_processes(raw, 1, worker)
    enqueuer.enqueue(jobs.Done, "first")
    wait_until(lambda: raw.scard("done") == 1, message=worker.log_tail)
    page = tab.go("/queues")
    row = page.get_by_role("row").filter(has_text="web")
    row.get_by_role("button", name="Pause").click()
    expect(page.locator(".cw-notice")).to_have_text("Paused 1 queue.")
    expect(page.locator(".cw-paused")).to_be_visible()
    held = [str(enqueuer.enqueue(jobs.Done, n)) for n in range(3)]
    wait_for_fetches(raw, 3, worker)
    assert raw.scard("done") == 1
    assert raw.llen(keys.queue("web")) == len(held)
    row.get_by_role("button", name="Resume").click()
    expect(page.locator(".cw-notice")).to_have_text("Resumed 1 queue.")
    expect(page.locator(".cw-paused")).to_have_count(0)
    wait_until(lambda: raw.scard("done") == 4, message=worker.log_tail)


def test_bulk_retry_of_selected_dead_jobs(
    tab: Tab, workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """Select all on the Dead page, confirm the count, and the jobs run again."""
    worker = workers.start(WEB_APP)
    wait_for_processes(raw, 1, worker)
    jids = [str(enqueuer.enqueue(jobs.FailsUntilAllowed, n)) for n in range(3)]
    wait_until(lambda: raw.zcard(keys.dead("web")) == 3, message=worker.log_tail)
    for jid in jids:
        raw.set(f"allow:{jid}", "1")
    page = tab.go("/dead")
    retry = page.get_by_role("button", name="Retry selected")
    expect(retry).to_be_disabled()
    page.get_by_label("Select all on this page").check()
    expect(retry).to_be_enabled()
    asked: list[str] = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
    retry.click()
    expect(page.locator(".cw-notice")).to_have_text("Retried 3 jobs.")
    assert asked == ["Retry 3 selected job(s)?"]
    wait_until(lambda: raw.scard("done") == 3, message=worker.log_tail)


def test_paging_through_500_entries_killed_at_once_reaches_all_500(
    tab: Tab, raw: redis.Redis
) -> None:
    """ "Kill all" files 500 retries in dead a batch at a time, each batch's with one score;
    Next page, 25 at a time, shows each of them exactly once."""
    jids = [f"tied{n:03d}" for n in range(500)]
    entry = {"class": "app.Sync", "queue": "q", "args": [], "retry": 3, "created_at": 1.7e9,
             "retry_count": 1, "error_class": "Timeout", "error_message": "slow"}  # fmt: skip
    add_to_set(raw, keys.retry("q"), {json.dumps({**entry, "jid": jid}): 4.1e9 for jid in jids})
    page = tab.go("/retries")
    page.get_by_role("link", name="Kill all…").click()
    page.get_by_role("button", name="Kill all").click()
    expect(page.locator(".cw-bulk-state")).to_have_text(
        "Finished: killed 500 jobs of 500 matching, 500 entries looked at.", timeout=30_000
    )
    scores = [score for _, score in raw.zrange(keys.dead("q"), 0, -1, withscores=True)]
    assert len(set(scores)) <= -(-500 // bulk.BATCH)  # a batch shares a score: ties galore

    page = tab.go("/dead?per=25")
    seen: list[str] = []
    for _ in range(30):  # 20 pages, and a bound should paging loop
        seen += page.locator("tbody td a.mono").all_inner_texts()
        next_page = page.get_by_role("link", name="Next page →")
        if next_page.count() == 0:
            break
        next_page.click()
        page.wait_for_load_state("load")
    assert len(seen) == 500
    assert sorted(seen) == jids


def test_a_job_page_shows_its_job_moved_and_finds_it_again(tab: Tab, raw: redis.Redis) -> None:
    """Dead → its page (by the link's place); the job goes to Retries meanwhile: a poll says
    it moved, and "Search for it" lands on its page in Retries."""
    entry = json.dumps({"class": "app.Send", "queue": "default", "jid": "mover01", "args": [1],
                        "retry": True, "created_at": 1.7e9, "retry_count": 1,
                        "error_class": "Boom", "error_message": "boom"})  # fmt: skip
    add_to_set(raw, keys.dead("default"), {entry: 1.7e9})
    page = tab.go("/dead")
    page.get_by_role("link", name="mover01").click()
    where = page.locator(".cw-job-where .tag").first
    expect(where).to_have_text("Dead")
    assert "in=dead" in page.url
    page.select_option("#cw-poll-interval", "2")
    raw.delete(keys.dead("default"))
    add_to_set(raw, keys.retry("default"), {entry: 4.0e9})
    expect(page.locator(".cw-moved")).to_be_visible(timeout=15_000)  # the next poll
    tab.shot("job-moved")
    page.get_by_role("link", name="Search for it").click()
    expect(where).to_have_text("Retrying")
    assert "in=retries" in page.url


def test_a_jid_holding_control_characters_opens_from_its_link(tab: Tab, raw: redis.Redis) -> None:
    """A dead job whose jid holds a control character and a space at its end: its link (the
    jid shown with the character escaped) opens its page, in Dead."""
    entry = json.dumps({"class": "app.Send", "queue": "default", "jid": "odd\x01jid ",
                        "args": [1], "retry": True, "created_at": 1.7e9})  # fmt: skip
    add_to_set(raw, keys.dead("default"), {entry: 1.7e9})
    page = tab.go("/dead")
    page.get_by_role("link", name="odd\\u0001jid").click()
    expect(page.locator(".cw-job-where .tag").first).to_have_text("Dead")
    assert "in=dead" in page.url
