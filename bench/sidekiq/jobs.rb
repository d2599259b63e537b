# The harness's job bodies as Sidekiq jobs, for bench/sidekiq_bench.py and
# bench/sidekiq_fail_bench.py: the workers load this file (`sidekiq -r`),
# and so does the enqueueing side (bench/sidekiq/client.rb).
#
# Every job does what the harness's Python jobs do (shared/bench/peers/common.py):
# Noop one INCR of bench:done, Lat one RPUSH of (start - enqueue) µs to
# bench:lat, Fail one INCR of bench:attempts and then raises. Each through
# redis-rb on a connection of the job's own thread (redis-py's pool gives each
# Python worker thread its own connection the same way), not Sidekiq's pool.
require "logger"
require "redis"
require "sidekiq"

module Bench
  URL = ENV.fetch("BENCH_REDIS_URL", "redis://127.0.0.1:6391/0")
  DONE_KEY = "bench:done"
  LAT_KEY = "bench:lat"
  ATTEMPTS_KEY = "bench:attempts"
  # run.py --no-incr sets BENCH_NOOP_INCR=0: then Noop does nothing at all
  NOOP_INCR = ENV.fetch("BENCH_NOOP_INCR", "1") != "0"

  # What the failing workload's jobs raise (bench/fail_work.py has its rules).
  class DeliberateError < StandardError; end

  def self.redis
    Thread.current[:bench_redis] ||= Redis.new(url: URL)
  end

  def self.now_us
    Process.clock_gettime(Process::CLOCK_REALTIME, :microsecond)
  end
end

# Debian pairs Sidekiq 6.4.1 with redis-rb 4.8, which warns on stderr at
# every push (`sadd`) and fetch (`brpop` timeout argument) that Sidekiq 6.4
# calls the old way: the warning, not Sidekiq, would be measured.
Redis.silence_deprecations = true

Sidekiq.configure_server { |config| config.redis = { url: Bench::URL } }
Sidekiq.configure_client { |config| config.redis = { url: Bench::URL } }
# The harness runs every library at WARNING: Sidekiq's INFO logs two lines a job.
Sidekiq.logger.level = Logger::WARN

class Noop
  include Sidekiq::Job

  def perform(_i)
    Bench.redis.incr(Bench::DONE_KEY) if Bench::NOOP_INCR
  end
end

class Lat
  include Sidekiq::Job

  def perform(enqueued_us)
    start = Bench.now_us
    Bench.redis.rpush(Bench::LAT_KEY, start - enqueued_us)
  end
end

# Sidekiq's default retry policy (retry: true, 25 retries, the first after
# 15-24 s): a failure is filed in the `retry` sorted set.
class Fail
  include Sidekiq::Job

  def perform(_i)
    Bench.redis.incr(Bench::ATTEMPTS_KEY)
    raise Bench::DeliberateError, "bench: failing on purpose"
  end
end
