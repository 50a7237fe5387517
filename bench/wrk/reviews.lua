-- wrk script for bench/webhook_load.sh: POSTs a mix of recorded AdmissionReview bodies,
-- round-robin, over the keep-alive connections wrk holds open.
--
--   wrk -t2 -c32 -d20s --latency -s bench/wrk/reviews.lua https://127.0.0.1:PORT/validate \
--       -- tests/fixtures/admission/seed-job-create.json tests/fixtures/admission/job-delete.json ...
--
-- Every argument after `--` is a file whose bytes are sent as one request body. The requests are
-- formatted once per thread in init(), so the client spends its time on I/O and TLS, not Lua.
-- Each thread starts at a different offset so the threads do not send the same review in step.

local requests = {}
local next_index = 0

function setup(thread)
   setup_count = (setup_count or 0) + 1
   thread:set("offset", setup_count)
end

function init(args)
   if #args == 0 then
      error("reviews.lua: pass the review files after --")
   end
   local headers = {
      ["Content-Type"] = "application/json",
      ["Host"] = wrk.host .. ":" .. tostring(wrk.port),
   }
   for _, path in ipairs(args) do
      local f = assert(io.open(path, "rb"))
      local body = f:read("*a")
      f:close()
      requests[#requests + 1] = wrk.format("POST", wrk.path, headers, body)
   end
   next_index = (offset or 0) % #requests
end

function request()
   next_index = next_index % #requests + 1
   return requests[next_index]
end
