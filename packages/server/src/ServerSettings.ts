// Apart from `ServerConfig.ts` so the command line can print its usage without loading the platform.

/** Every setting, as environment variable; each is also a flag (`--data-dir` for `DATA_DIR`). */
export const settings = [
  ["PORT", "port to listen on (3000); 0 picks any free port"],
  ["HOST", "address to listen on (127.0.0.1)"],
  ["DATA_DIR", "embedded database folder (./.trading-data); memory:// keeps nothing"],
  ["DATABASE_URL", "PostgreSQL URL; replaces the embedded database"],
  ["REDIS_URL", "Redis URL for rate-limit counts shared by replicas"],
  ["TOKEN_TTL_DAYS", "session token lifetime in days (180)"],
  ["RATE_LIMIT_AUTH_PER_MIN", "login and register requests per IP per minute (10)"],
  ["LOGIN_FAILURES_ALLOWED", "failed logins of one account, from any IP, before each next one makes it wait (5)"],
  [
    "LOGIN_DELAY_MAX_S",
    "the longest wait of an account after failed logins (1 s, doubling per failure), in seconds (900)"
  ],
  ["RATE_LIMIT_READ_PER_MIN", "GET requests per token and per IP per minute (120)"],
  ["RATE_LIMIT_WRITE_PER_MIN", "POST/PUT/PATCH/DELETE requests per token and per IP per minute (60)"],
  ["WS_MAX_MESSAGE_BYTES", "the largest WebSocket message a client may send, in bytes; larger closes 1009 (65536)"],
  ["WS_MAX_QUEUED_MESSAGES", "WebSocket messages received and not yet handled, per socket; more closes 1013 (64)"],
  ["WS_MAX_UNAUTHENTICATED_PER_IP", "WebSockets from one IP not yet authenticated; more are closed 1013 (10)"],
  ["WS_AUTH_TIMEOUT_S", "seconds a WebSocket may take to authenticate before it is closed 1008 (5)"],
  [
    "SANDBOX_RUNTIME",
    "where programs run: v8 (isolates, needs isolated-vm) or quickjs (WebAssembly) (v8 where isolated-vm loads, else quickjs)"
  ],
  ["CORS_ORIGINS", "origins whose browser pages may call the API, comma-separated (none: no CORS headers)"],
  ["TRUST_PROXY", "take the client IP from X-Forwarded-For (false)"],
  ["PASSWORD_SCRYPT_COST", "scrypt cost N of new password hashes, a power of two (131072, OWASP's 2^17)"],
  ["OPERATOR_EMAILS", "e-mails of the users who are operators (platform-wide figures), comma-separated (none)"],
  ["SECRET_KEY", "key (32+ characters) for secrets at rest; required with DATABASE_URL, else generated into DATA_DIR"],
  ["VENUE1_MODE", "venue1: simulated or http (simulated)"],
  ["VENUE1_BASE_URL", "venue1 API base URL (https://api.hyperliquid.xyz)"],
  ["VENUE1_TIMEOUT_MS", "venue1 request timeout in milliseconds (10000)"],
  ["VENUE1_RETRIES", "venue1 extra attempts after a transport error or 5xx (2)"],
  ["VENUE2_MODE", "venue2: simulated or http (simulated)"],
  ["VENUE2_BASE_URL", "venue2 API base URL (https://fapi.binance.com)"],
  ["VENUE2_TIMEOUT_MS", "venue2 request timeout in milliseconds (10000)"],
  ["VENUE2_RETRIES", "venue2 extra attempts after a transport error or 5xx (2)"],
  [
    "VENUE1_MARGIN_TIERS",
    "venue1 margin tiers, a JSON array of {notional_floor, max_leverage, maintenance_rate} (docs)"
  ],
  ["VENUE1_LIQUIDATION_FEE_RATE", "venue1 liquidation fee, a fraction of notional (0)"],
  [
    "VENUE2_MARGIN_TIERS",
    "venue2 margin tiers, a JSON array of {notional_floor, max_leverage, maintenance_rate} (docs)"
  ],
  ["VENUE2_LIQUIDATION_FEE_RATE", "venue2 liquidation fee, a fraction of notional (0.0125)"],
  ["SIMULATION_SEED", "seed of the simulated market (42)"],
  ["SIMULATION_CORRELATION", "correlation of two simulated symbols' returns through the market factor, 0 to 1 (0.8)"],
  ["MARKET_DATA_TTL_MS", "how long venue market data is served from the cache, in milliseconds (2000)"],
  ["BACKTEST_CONCURRENCY", "backtest jobs this instance runs at once; 0 runs none (2)"],
  [
    "BACKTEST_POLL_INTERVAL_MS",
    "how often an idle backtest worker looks for jobs it was not woken for, in milliseconds (30000)"
  ],
  [
    "BACKTEST_LEASE_MS",
    "how long a backtest claim holds without renewal before another worker takes the job over (30000)"
  ],
  ["BACKTEST_MAX_ATTEMPTS", "claims of one backtest job before it fails for good (3)"],
  [
    "MAX_QUEUED_JOBS_PER_USER",
    "backtests, insights and candle syncs one user may have queued or running, each kind apart (10)"
  ],
  ["RANKING_CACHE_S", "how long a computed ranking table or factor effectiveness is served, in seconds (60)"],
  ["SIGNAL_SAMPLER", "run the signal engine's sampling rounds in this instance (true)"],
  ["SAMPLING_INTERVAL_S", "seconds between two signal sampling rounds (15)"],
  [
    "SIGNAL_LEASE_S",
    "how long the signal engine lease holds without renewal before another instance takes over, in seconds (60)"
  ],
  ["AUTOMATION_ENABLED", "run the automation scheduler, signal-triggered runs and the arena PnL refresher here (true)"],
  [
    "REQUIRE_BIAS_CHECK",
    "a binding trading on a venue that is not simulated needs a passed bias check of its program's current code (true)"
  ],
  ["AUTOMATION_CONCURRENCY", "automation runs this instance executes at once; 0 runs none (2)"],
  [
    "AUTOMATION_POLL_INTERVAL_MS",
    "how often the scheduler with nothing to watch, and idle run workers, look for work they were not woken for, in milliseconds (30000)"
  ],
  [
    "AUTOMATION_WATCH_INTERVAL_MS",
    "how often the scheduler checks open positions' exits and resting entries while there are any, in milliseconds (1000)"
  ],
  ["AUTOMATION_LEASE_MS", "how long a run's claim (or the scheduler's lease) holds without renewal (30000)"],
  ["AUTOMATION_MAX_ATTEMPTS", "claims of one automation run before it fails for good (3)"],
  [
    "ARENA_PNL_REFRESH_MS",
    "how often arena PnL is recomputed from fills and marks and dashboard equity measured, in milliseconds (60000)"
  ],
  ["RECONCILE_INTERVAL_S", "how often live accounts are reconciled with their venue, in seconds (60)"],
  ["DEADMAN_TIMEOUT_S", "after how many seconds without this server a venue cancels resting entries (60, at least 15)"],
  ["AI_BASE_URL", "OpenAI-compatible server for the assistant (none: the built-in offline analyst)"],
  ["AI_MODEL", "model name sent to AI_BASE_URL (gpt-4o-mini)"],
  ["AI_API_KEY", "key for AI_BASE_URL, sent as a bearer token; prefer the environment to the flag"],
  ["AI_TIMEOUT_MS", "how long the assistant waits for the provider's answer, in milliseconds (60000)"],
  ["AI_TRADER_ROUNDS_PER_HOUR", "decision rounds an AI account may run per hour, unless it sets its own (12)"],
  ["AI_TRADER_TOKENS_PER_DAY", "model tokens an AI account may use per UTC day, unless it sets its own (200000)"],
  ["AI_TRADER_TIMEOUT_MS", "how long an AI account's model may take to answer, in milliseconds (30000)"],
  [
    "AI_TRADER_PRICES",
    "model prices per million tokens, JSON {\"model\": {\"prompt\": n, \"completion\": n}}; unlisted models cost 0 ({})"
  ],
  ["AI_CHAT_PER_HOUR", "assistant messages per user per hour (60)"],
  ["AI_INSIGHTS_PER_HOUR", "insight jobs per user per hour (20)"],
  ["AI_MAX_TOOL_CALLS", "tool calls the model may make while answering one message (8)"],
  ["INSIGHT_CONCURRENCY", "insight jobs this instance runs at once; 0 runs none (2)"],
  [
    "INSIGHT_POLL_INTERVAL_MS",
    "how often an idle insight worker looks for jobs it was not woken for, in milliseconds (30000)"
  ],
  [
    "INSIGHT_LEASE_MS",
    "how long an insight claim holds without renewal before another worker takes the job over (30000)"
  ],
  ["INSIGHT_MAX_ATTEMPTS", "claims of one insight job before it fails for good (3)"],
  ["CANDLE_SYNC_CONCURRENCY", "candle sync jobs this instance runs at once; 0 runs none (2)"],
  [
    "CANDLE_SYNC_POLL_INTERVAL_MS",
    "how often an idle candle sync worker looks for jobs it was not woken for, in milliseconds (30000)"
  ],
  [
    "CANDLE_SYNC_LEASE_MS",
    "how long a candle sync claim holds without renewal before another worker takes it over (30000)"
  ],
  ["CANDLE_SYNC_MAX_ATTEMPTS", "claims of one candle sync before it fails for good (3)"],
  ["NEWS_FETCH_INTERVAL_S", "time between two background fetches of every enabled news feed, in seconds (600)"],
  ["NEWS_TIMEOUT_MS", "how long one news feed may take to answer, in milliseconds (10000)"],
  ["NEWS_MAX_BYTES", "the most bytes one news feed's answer may have; the read stops past it (5242880)"],
  [
    "FETCH_ALLOW_HOSTS",
    "hosts fetched although internal (loopback, private, ...), comma-separated; for feeds on a private network (none)"
  ],
  ["PURGE_INTERVAL_MINUTES", "how often expired sessions, old backtests and old triggers are purged, in minutes (60)"],
  ["SESSION_RETENTION_DAYS", "days expired or revoked sessions are kept before the purge deletes them (30)"],
  ["BACKTEST_RETENTION_DAYS", "days finished backtests are kept before the purge deletes them; 0 keeps them (0)"],
  [
    "TRIGGER_RETENTION_DAYS",
    "days signal triggers are kept in the trigger log before the purge deletes them; 0 keeps them (0)"
  ],
  [
    "CONVERSATION_RETENTION_DAYS",
    "days after its last message an assistant conversation is kept before the purge deletes it; 0 keeps them (0)"
  ],
  ["CONSOLE", "serve the web console at /console: on or off (on)"],
  ["LOG_LEVEL", "All, Trace, Debug, Info, Warning, Error, Fatal or None (Info)"]
] as const
