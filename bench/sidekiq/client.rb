# Sidekiq's enqueueing side, driven by bench/sidekiq_bench.py: one JSON
# request a line on stdin, one JSON reply a line on stdout, so a whole
# enqueue phase runs here in Ruby and only its start and end cross the pipe.
#
#   {"op": "each", "kind": "noop", "args": [0, 1, ...]}   -> Noop.perform_async(i) per arg
#   {"op": "bulk", "kind": "noop", "args": [...], "batch": 1000}
#                                                          -> Sidekiq::Client.push_bulk per batch
#   {"op": "paced", "kind": "lat", "count": 2000, "rate": 200.0, "max_seconds": 15.0}
#                                                          -> perform_async(now_us) at a steady rate
# Reply: {"sent": n} or {"error": "Class: message"}.
require "json"
require_relative "jobs"

JOBS = { "noop" => Noop, "lat" => Lat, "fail" => Fail }.freeze

def monotonic
  Process.clock_gettime(Process::CLOCK_MONOTONIC)
end

# shared/bench/peers/common.py's paced_sync: the timestamp is taken just
# before the enqueue call, so the latency includes the client's cost.
def paced(job, count, rate, max_seconds)
  t0 = monotonic
  interval = 1.0 / rate
  sent = 0
  count.times do |i|
    delay = t0 + i * interval - monotonic
    sleep(delay) if delay.positive?
    break if monotonic - t0 > max_seconds

    job.perform_async(Bench.now_us)
    sent += 1
  end
  sent
end

def handle(request)
  job = JOBS.fetch(request.fetch("kind"))
  case request.fetch("op")
  when "each"
    request.fetch("args").each { |arg| job.perform_async(arg) }
    request.fetch("args").size
  when "bulk"
    request.fetch("args").each_slice(request.fetch("batch")) do |part|
      Sidekiq::Client.push_bulk("class" => job, "args" => part.map { |arg| [arg] })
    end
    request.fetch("args").size
  when "paced"
    paced(job, request.fetch("count"), request.fetch("rate"), request.fetch("max_seconds"))
  else
    raise ArgumentError, "unknown op #{request['op'].inspect}"
  end
end

$stdout.sync = true
$stdin.each_line do |line|
  reply = begin
    { "sent" => handle(JSON.parse(line)) }
  rescue StandardError => e # handed to the Python side, which raises it
    { "error" => "#{e.class}: #{e.message}" }
  end
  puts JSON.generate(reply)
end
