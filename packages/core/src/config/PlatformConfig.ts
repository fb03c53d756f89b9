import {
  Config,
  ConfigError,
  ConfigProvider,
  Context,
  Duration,
  Effect,
  Either,
  Layer,
  Option,
  ParseResult,
  Redacted,
  Schema
} from "effect"
import { normalizeHost } from "../fetch/AddressPolicy.js"
import { defaultRateLimitPolicy, type RateLimitPolicy, rateLimitPolicyPerMinute } from "../http/RateLimitPolicy.js"
import type { JobOptions } from "../jobs/JobOptions.js"
import { defaultSandboxLimits, type SandboxLimits } from "../sandbox/SandboxLimits.js"
import { defaultMarginTables, type MarginTable, MarginTiers } from "../venues/MarginTiers.js"
import { integerSetting, jobOptionsConfig, positiveInt } from "./Settings.js"

/** Where the platform keeps its data. */
export type StorageConfig =
  | { readonly kind: "pglite"; readonly dataDir: string }
  | { readonly kind: "postgres"; readonly url: Redacted.Redacted }

export interface PlatformOptions {
  readonly storage: StorageConfig
  /** Redis for rate-limit counts shared by replicas; in-process memory when none. */
  readonly redisUrl: Option.Option<Redacted.Redacted>
  readonly tokenTtl: Duration.Duration
  readonly rateLimits: RateLimitPolicy
  /** Take the client IP from `X-Forwarded-For` (only behind a proxy you run). */
  readonly trustProxy: boolean
  /** Key for secrets at rest; none means generated once into the data directory (embedded mode only). */
  readonly secretKey: Option.Option<Redacted.Redacted>
  readonly venues: VenuesOptions
  readonly backtests: BacktestJobOptions
  /** Jobs of one kind (backtests, insights, candle syncs) a user may have queued or running at once. */
  readonly maxQueuedJobsPerUser: number
  /** Caps on every program run: validation and the backtest threads (whose watchdog also reads them). */
  readonly sandbox: SandboxLimits
  readonly automation: AutomationOptions
  readonly ranking: RankingOptions
  readonly signals: SignalEngineOptions
  readonly retention: RetentionOptions
  readonly assistant: AssistantOptions
  readonly news: NewsOptions
  readonly fetch: FetchOptions
  readonly passwords: PasswordOptions
  /** E-mails (any case) of the users who are operators, besides those the command line made operators. */
  readonly operatorEmails: ReadonlyArray<string>
  readonly websocket: WebSocketOptions
  /** AI traders' pace and cost (docs/ai-traders.md); the defaults below when not set. */
  readonly aiTraders?: AiTraderOptions
}

/** Price per million tokens of one model, in whatever currency the operator counts in. */
export interface ModelPrice {
  readonly prompt: number
  readonly completion: number
}

/** Cost and pace of AI traders (each account may set its own limits instead). */
export interface AiTraderOptions {
  /** Decision rounds one account may run per hour. */
  readonly roundsPerHour: number
  /** Model tokens (prompt and completion) one account may use per UTC day. */
  readonly tokensPerDay: number
  /** How long one call of an account's model may take. */
  readonly timeout: Duration.Duration
  /** Prices by model name; a model not listed (the built-in one among them) costs 0. */
  readonly prices: Readonly<Record<string, ModelPrice>>
}

/** What AI traders use when `aiTraders` is not set. */
export const defaultAiTraderOptions: AiTraderOptions = {
  roundsPerHour: 12,
  tokensPerDay: 200_000,
  timeout: Duration.seconds(30),
  prices: {}
}

/** What one `GET /api/ws` socket may cost the server (docs/streams.md, close codes there). */
export interface WebSocketOptions {
  /** The largest message a client may send, in bytes; the frame is refused as it starts (close 1009). */
  readonly maxMessageBytes: number
  /** Messages a socket has received and not yet handled; one more closes it (1013). */
  readonly maxQueuedMessages: number
  /** Sockets from one IP address that have not authenticated yet; one more is closed at once (1013). */
  readonly maxUnauthenticatedPerIp: number
  /** How long a socket may take to authenticate (the token in its first message); then it is closed (1008). */
  readonly authTimeout: Duration.Duration
}

/** OWASP's scrypt cost: N=2^17 (with r=8, p=1, about 128 MiB and a few hundred ms a hash). */
export const owaspScryptCost = 2 ** 17

/** How passwords are hashed. */
export interface PasswordOptions {
  /** scrypt's cost N for new hashes (r=8, p=1); older, weaker hashes are re-hashed at their next login. */
  readonly scryptCost: number
}

/** How news feeds are read. */
export interface NewsOptions {
  /** Time between two background fetches of every enabled feed (one instance fetches at a time). */
  readonly fetchInterval: Duration.Duration
  /** How long one feed may take to answer. */
  readonly timeout: Duration.Duration
  /** The most bytes one feed's answer may have; the read stops past it. */
  readonly maxBytes: number
}

/** How URLs that users give (news feeds) are fetched. */
export interface FetchOptions {
  /**
   * Hosts (as the URL parser writes them: lower case, `127.0.0.1`, `[::1]`) fetched even though
   * they are internal addresses or resolve to some; no other internal address is ever fetched.
   */
  readonly allowHosts: ReadonlyArray<string>
}

/** The assistant's language model and its per-user limits. */
export interface AssistantOptions {
  /** An OpenAI-compatible server; none means the built-in offline analyst. */
  readonly provider: Option.Option<
    { readonly baseUrl: string; readonly model: string; readonly apiKey: Option.Option<Redacted.Redacted> }
  >
  readonly timeout: Duration.Duration
  readonly chatPerHour: number
  readonly insightsPerHour: number
  /** Tool calls the model may make while answering one message; later ones are answered without running. */
  readonly maxToolCalls: number
  /** How this instance runs insight jobs. */
  readonly insightJobs: JobOptions
}

export interface RankingOptions {
  /** How long a computed ranking table (or factor effectiveness) is served before it is computed again. */
  readonly cacheTtl: Duration.Duration
}

/** How this instance takes part in the signal engine (one instance at a time runs it; see `SignalEngine`). */
export interface SignalEngineOptions {
  /** Whether this instance runs sampling rounds in the background (else only `evaluateNow` does). */
  readonly sampler: boolean
  /** Time between two sampling rounds. */
  readonly samplingInterval: Duration.Duration
  /** How long the engine lease holds without renewal before another instance takes the engine over. */
  readonly lease: Duration.Duration
}

/** How this instance runs live automation: the binding scheduler, run workers and the arena PnL refresher. */
export interface AutomationOptions extends JobOptions {
  /** Whether this instance runs the scheduler, the signal subscription and the PnL refresher (each leased to one replica). */
  readonly enabled: boolean
  /**
   * Whether a binding that trades on a venue that is not simulated needs a passed bias check of its
   * program's current code (docs/programs.md#bias-checks); true when not set.
   */
  readonly requireBiasCheck?: boolean
  /** How often arena PnL is recomputed from fills and marks. */
  readonly pnlRefreshInterval: Duration.Duration
  /** How often live accounts are reconciled with their venues (besides at start and after a venue error); 1 minute when not set. */
  readonly reconcileInterval?: Duration.Duration
  /**
   * After how long without this server a venue cancels a live account's resting entries (its
   * cancel-all-after, re-armed every third of it); 1 minute when not set.
   */
  readonly deadManTimeout?: Duration.Duration
  /**
   * How often the scheduler passes while it has something to watch (open positions, resting
   * entries, exits being settled): the exits' reaction time; 1 s when not set. With nothing to
   * watch it sleeps until the next slot of an enabled binding, a change that wakes it, or
   * `pollInterval`, whichever comes first.
   */
  readonly watchInterval?: Duration.Duration
}

/** How long records that are no longer in use are kept before a purge deletes them. */
export interface RetentionOptions {
  /** How often the purges run (once across all replicas). */
  readonly purgeInterval: Duration.Duration
  /** Sessions this long after they expired or were revoked. */
  readonly sessions: Duration.Duration
  /** Finished backtests (completed, failed, cancelled) this long after they finished; none keeps them. */
  readonly backtests: Option.Option<Duration.Duration>
  /** Triggers of the signal trigger log this long after they fired; none keeps them. */
  readonly triggers: Option.Option<Duration.Duration>
  /** Assistant conversations this long after their last message; none keeps them. */
  readonly conversations: Option.Option<Duration.Duration>
}

/** How this instance runs backtest jobs (every replica may run them; the database hands each to one). */
export type BacktestJobOptions = JobOptions

/** How the platform reaches one venue: the deterministic simulation, or the real HTTP API. */
export interface VenueConnection {
  readonly mode: "simulated" | "http"
  readonly baseUrl: string
  readonly timeout: Duration.Duration
  /** Extra attempts after a failed request (transport errors and 5xx only). */
  readonly retries: number
}

export interface VenuesOptions {
  readonly venue1: VenueConnection
  readonly venue2: VenueConnection
  /** Seed of the simulated market. */
  readonly simulationSeed: number
  /** Correlation of any two simulated symbols' returns, through their common market factor (0 to 1). */
  readonly simulationCorrelation: number
  /** How long market data from a venue is served from the cache. */
  readonly marketDataTtl: Duration.Duration
  /** The candle sync jobs (`POST /api/market/candles/sync`) of this instance. */
  readonly candleSyncs: JobOptions
  /** Each venue's margin brackets and liquidation fee (docs/trading-rules.md), capped per symbol by its leverage. */
  readonly marginTables: typeof defaultMarginTables
}

export { integerSetting } from "./Settings.js"

const venueConnection = (prefix: "VENUE1" | "VENUE2", defaultUrl: string) =>
  Config.all({
    mode: Config.literal("simulated", "http")(`${prefix}_MODE`).pipe(Config.withDefault("simulated" as const)),
    baseUrl: Config.url(`${prefix}_BASE_URL`).pipe(
      Config.withDefault(new URL(defaultUrl)),
      Config.map((url) => url.href.replace(/\/$/, ""))
    ),
    timeout: positiveInt(`${prefix}_TIMEOUT_MS`, 10_000).pipe(Config.map(Duration.millis)),
    retries: integerSetting(`${prefix}_RETRIES`, 2, "must be a whole number from 0 to 10", (n) => n >= 0 && n <= 10)
  })

const decodeTiers = Schema.decodeUnknownEither(Schema.parseJson(MarginTiers))

const decodePrices = Schema.decodeUnknownEither(Schema.parseJson(Schema.Record({
  key: Schema.String,
  value: Schema.Struct({
    prompt: Schema.Number.pipe(Schema.nonNegative()),
    completion: Schema.Number.pipe(Schema.nonNegative())
  })
})))

/** `<PREFIX>_MARGIN_TIERS` (a JSON array of tiers) and `<PREFIX>_LIQUIDATION_FEE_RATE`, by default the venue's documented table. */
const marginTable = (prefix: "VENUE1" | "VENUE2", fallback: MarginTable): Config.Config<MarginTable> =>
  Config.all({
    tiers: Config.string().pipe(
      Config.mapOrFail((text) =>
        Either.mapLeft(decodeTiers(text), (error) => {
          const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
          const path = (issue?.path ?? []).map((p) => typeof p === "number" ? `[${p}]` : `.${String(p)}`).join("")
          const where = path === "" ? "" : ` at ${path.replace(/^\./, "")}`
          return ConfigError.InvalidData(
            [],
            `must be a JSON array of tiers {notional_floor, max_leverage, maintenance_rate}, the first at ` +
              `notional_floor 0 and floors rising (${issue?.message ?? "unreadable"}${where})`
          )
        })
      ),
      Config.nested(`${prefix}_MARGIN_TIERS`),
      Config.withDefault(fallback.tiers)
    ),
    liquidation_fee_rate: Config.number().pipe(
      Config.validate({ message: "must be a number from 0 to 1", validation: (n) => n >= 0 && n <= 1 }),
      Config.nested(`${prefix}_LIQUIDATION_FEE_RATE`),
      Config.withDefault(fallback.liquidation_fee_rate)
    )
  })

// AES keys are derived from SECRET_KEY; a short one would be guessable.
const secretKey = Config.option(
  Config.string("SECRET_KEY").pipe(
    Config.validate({ message: "must be at least 32 characters", validation: (key) => key.length >= 32 }),
    Config.map(Redacted.make)
  )
)

/** A comma-separated list of host names and IP addresses, each written as the URL parser writes it. */
const hostList = (name: string): Config.Config<ReadonlyArray<string>> =>
  Config.string().pipe(
    Config.mapOrFail((text) => {
      const entries = text.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "")
      const hosts = entries.map(normalizeHost)
      const bad = entries.find((_, i) => hosts[i] === null)
      return bad === undefined
        ? Either.right<ReadonlyArray<string>>(hosts as Array<string>)
        : Either.left(ConfigError.InvalidData([], `"${bad}" is not a host name or IP address (no port or path)`))
    }),
    Config.nested(name),
    Config.withDefault<ReadonlyArray<string>>([])
  )

/** A retention in days; 0 keeps forever. */
const days = (n: number) => (n === 0 ? Option.none() : Option.some(Duration.days(n)))

/** Every setting of `docs/configuration.md`, read through Effect's Config (environment variables by default). */
export const platformConfig: Config.Config<PlatformOptions> = Config.all({
  dataDir: Config.string("DATA_DIR").pipe(Config.withDefault("./.trading-data")),
  databaseUrl: Config.option(Config.redacted("DATABASE_URL")),
  redisUrl: Config.option(Config.redacted("REDIS_URL")),
  tokenTtlDays: positiveInt("TOKEN_TTL_DAYS", 180),
  auth: positiveInt("RATE_LIMIT_AUTH_PER_MIN", 10),
  loginFailuresAllowed: positiveInt("LOGIN_FAILURES_ALLOWED", 5),
  loginDelayMaxS: positiveInt("LOGIN_DELAY_MAX_S", 900),
  scryptCost: integerSetting(
    "PASSWORD_SCRYPT_COST",
    owaspScryptCost,
    "must be a power of two from 1024 to 1048576",
    (n) => n >= 1024 && n <= 1048576 && (n & (n - 1)) === 0
  ),
  operatorEmails: Config.string("OPERATOR_EMAILS").pipe(
    Config.withDefault(""),
    Config.map((text) => text.split(",").map((email) => email.trim().toLowerCase()).filter((email) => email !== ""))
  ),
  read: positiveInt("RATE_LIMIT_READ_PER_MIN", 120),
  write: positiveInt("RATE_LIMIT_WRITE_PER_MIN", 60),
  trustProxy: Config.boolean("TRUST_PROXY").pipe(Config.withDefault(false)),
  secretKey,
  venue1: venueConnection("VENUE1", "https://api.hyperliquid.xyz"),
  venue2: venueConnection("VENUE2", "https://fapi.binance.com"),
  simulationSeed: Config.integer("SIMULATION_SEED").pipe(Config.withDefault(42)),
  simulationCorrelation: Config.number().pipe(
    Config.validate({ message: "must be a number from 0 to 1", validation: (n) => n >= 0 && n <= 1 }),
    Config.nested("SIMULATION_CORRELATION"),
    Config.withDefault(0.8)
  ),
  marketDataTtlMs: positiveInt("MARKET_DATA_TTL_MS", 2_000),
  venue1Margin: marginTable("VENUE1", defaultMarginTables.venue1),
  venue2Margin: marginTable("VENUE2", defaultMarginTables.venue2),
  candleSyncs: jobOptionsConfig("CANDLE_SYNC"),
  backtests: jobOptionsConfig("BACKTEST"),
  maxQueuedJobsPerUser: positiveInt("MAX_QUEUED_JOBS_PER_USER", 10),
  // Queued runs wake their workers and changes wake the scheduler: the poll is only the fallback.
  automation: jobOptionsConfig("AUTOMATION"),
  automationWatchMs: positiveInt("AUTOMATION_WATCH_INTERVAL_MS", 1_000),
  reconcileSeconds: positiveInt("RECONCILE_INTERVAL_S", 60),
  deadManSeconds: integerSetting("DEADMAN_TIMEOUT_S", 60, "must be a whole number of at least 15", (n) => n >= 15),
  automationEnabled: Config.boolean("AUTOMATION_ENABLED").pipe(Config.withDefault(true)),
  requireBiasCheck: Config.boolean("REQUIRE_BIAS_CHECK").pipe(Config.withDefault(true)),
  pnlRefreshMs: integerSetting(
    "ARENA_PNL_REFRESH_MS",
    60_000,
    "must be a whole number of at least 1000",
    (n) => n >= 1000
  ),
  aiBaseUrl: Config.option(Config.url("AI_BASE_URL").pipe(Config.map((url) => url.href.replace(/\/$/, "")))),
  aiModel: Config.string("AI_MODEL").pipe(Config.withDefault("gpt-4o-mini")),
  aiApiKey: Config.option(Config.redacted("AI_API_KEY")),
  aiTimeoutMs: positiveInt("AI_TIMEOUT_MS", 60_000),
  aiTraderRoundsPerHour: positiveInt("AI_TRADER_ROUNDS_PER_HOUR", defaultAiTraderOptions.roundsPerHour),
  aiTraderTokensPerDay: positiveInt("AI_TRADER_TOKENS_PER_DAY", defaultAiTraderOptions.tokensPerDay),
  aiTraderTimeoutMs: positiveInt("AI_TRADER_TIMEOUT_MS", Duration.toMillis(defaultAiTraderOptions.timeout)),
  aiTraderPrices: Config.string().pipe(
    Config.mapOrFail((text) =>
      Either.mapLeft(
        decodePrices(text),
        () =>
          ConfigError.InvalidData(
            [],
            `must be a JSON object of model names to {prompt, completion} prices per million tokens`
          )
      )
    ),
    Config.nested("AI_TRADER_PRICES"),
    Config.withDefault(defaultAiTraderOptions.prices)
  ),
  aiChatPerHour: positiveInt("AI_CHAT_PER_HOUR", 60),
  aiInsightsPerHour: positiveInt("AI_INSIGHTS_PER_HOUR", 20),
  aiMaxToolCalls: positiveInt("AI_MAX_TOOL_CALLS", 8),
  insightJobs: jobOptionsConfig("INSIGHT"),
  newsFetchIntervalS: positiveInt("NEWS_FETCH_INTERVAL_S", 600),
  newsTimeoutMs: positiveInt("NEWS_TIMEOUT_MS", 10_000),
  newsMaxBytes: positiveInt("NEWS_MAX_BYTES", 5 * 1024 * 1024),
  fetchAllowHosts: hostList("FETCH_ALLOW_HOSTS"),
  rankingCacheS: positiveInt("RANKING_CACHE_S", 60),
  signalSampler: Config.boolean("SIGNAL_SAMPLER").pipe(Config.withDefault(true)),
  samplingIntervalS: positiveInt("SAMPLING_INTERVAL_S", 15),
  signalLeaseS: positiveInt("SIGNAL_LEASE_S", 60),
  purgeIntervalMinutes: positiveInt("PURGE_INTERVAL_MINUTES", 60),
  sessionRetentionDays: integerSetting(
    "SESSION_RETENTION_DAYS",
    30,
    "must be a whole number of days, 0 or more",
    (n) => n >= 0
  ),
  backtestRetentionDays: integerSetting(
    "BACKTEST_RETENTION_DAYS",
    0,
    "must be a whole number of days, 0 (keep) or more",
    (n) => n >= 0
  ),
  triggerRetentionDays: integerSetting(
    "TRIGGER_RETENTION_DAYS",
    0,
    "must be a whole number of days, 0 (keep) or more",
    (n) => n >= 0
  ),
  wsMaxMessageBytes: integerSetting(
    "WS_MAX_MESSAGE_BYTES",
    64 * 1024,
    "must be a whole number of bytes from 1024 to 16777216",
    (n) => n >= 1024 && n <= 16 * 1024 * 1024
  ),
  wsMaxQueuedMessages: positiveInt("WS_MAX_QUEUED_MESSAGES", 64),
  wsMaxUnauthenticatedPerIp: positiveInt("WS_MAX_UNAUTHENTICATED_PER_IP", 10),
  wsAuthTimeoutS: positiveInt("WS_AUTH_TIMEOUT_S", 5),
  sandboxRuntime: Config.option(Config.literal("v8", "quickjs")("SANDBOX_RUNTIME")),
  conversationRetentionDays: integerSetting(
    "CONVERSATION_RETENTION_DAYS",
    0,
    "must be a whole number of days, 0 (keep) or more",
    (n) => n >= 0
  )
}).pipe(
  // A key generated into the data directory would differ per replica, so PostgreSQL needs one given.
  Config.mapOrFail((c) =>
    Option.isSome(c.databaseUrl) && Option.isNone(c.secretKey)
      ? Either.left(ConfigError.MissingData(["SECRET_KEY"], "SECRET_KEY is required when DATABASE_URL is set"))
      : Either.right(c)
  ),
  Config.map((c): PlatformOptions => ({
    storage: Option.match(c.databaseUrl, {
      onNone: () => ({ kind: "pglite", dataDir: c.dataDir }),
      onSome: (url) => ({ kind: "postgres", url })
    }),
    redisUrl: c.redisUrl,
    tokenTtl: Duration.days(c.tokenTtlDays),
    rateLimits: {
      ...rateLimitPolicyPerMinute(c),
      login_failures: {
        ...defaultRateLimitPolicy.login_failures,
        allowed: c.loginFailuresAllowed,
        max_delay_ms: c.loginDelayMaxS * 1000
      }
    },
    trustProxy: c.trustProxy,
    secretKey: c.secretKey,
    venues: {
      venue1: c.venue1,
      venue2: c.venue2,
      simulationSeed: c.simulationSeed,
      simulationCorrelation: c.simulationCorrelation,
      marketDataTtl: Duration.millis(c.marketDataTtlMs),
      candleSyncs: c.candleSyncs,
      marginTables: { venue1: c.venue1Margin, venue2: c.venue2Margin }
    },
    backtests: c.backtests,
    maxQueuedJobsPerUser: c.maxQueuedJobsPerUser,
    sandbox: Option.match(c.sandboxRuntime, {
      onNone: () => defaultSandboxLimits,
      onSome: (runtime) => ({ ...defaultSandboxLimits, runtime })
    }),
    automation: {
      ...c.automation,
      enabled: c.automationEnabled,
      requireBiasCheck: c.requireBiasCheck,
      pnlRefreshInterval: Duration.millis(c.pnlRefreshMs),
      reconcileInterval: Duration.seconds(c.reconcileSeconds),
      deadManTimeout: Duration.seconds(c.deadManSeconds),
      watchInterval: Duration.millis(c.automationWatchMs)
    },
    aiTraders: {
      roundsPerHour: c.aiTraderRoundsPerHour,
      tokensPerDay: c.aiTraderTokensPerDay,
      timeout: Duration.millis(c.aiTraderTimeoutMs),
      prices: c.aiTraderPrices
    },
    assistant: {
      provider: Option.map(c.aiBaseUrl, (baseUrl) => ({ baseUrl, model: c.aiModel, apiKey: c.aiApiKey })),
      timeout: Duration.millis(c.aiTimeoutMs),
      chatPerHour: c.aiChatPerHour,
      insightsPerHour: c.aiInsightsPerHour,
      maxToolCalls: c.aiMaxToolCalls,
      insightJobs: c.insightJobs
    },
    news: {
      fetchInterval: Duration.seconds(c.newsFetchIntervalS),
      timeout: Duration.millis(c.newsTimeoutMs),
      maxBytes: c.newsMaxBytes
    },
    fetch: { allowHosts: c.fetchAllowHosts },
    passwords: { scryptCost: c.scryptCost },
    operatorEmails: c.operatorEmails,
    websocket: {
      maxMessageBytes: c.wsMaxMessageBytes,
      maxQueuedMessages: c.wsMaxQueuedMessages,
      maxUnauthenticatedPerIp: c.wsMaxUnauthenticatedPerIp,
      authTimeout: Duration.seconds(c.wsAuthTimeoutS)
    },
    ranking: { cacheTtl: Duration.seconds(c.rankingCacheS) },
    signals: {
      sampler: c.signalSampler,
      samplingInterval: Duration.seconds(c.samplingIntervalS),
      lease: Duration.seconds(c.signalLeaseS)
    },
    retention: {
      purgeInterval: Duration.minutes(c.purgeIntervalMinutes),
      sessions: Duration.days(c.sessionRetentionDays),
      backtests: days(c.backtestRetentionDays),
      triggers: days(c.triggerRetentionDays),
      conversations: days(c.conversationRetentionDays)
    }
  }))
)

/**
 * Settings for a host that embeds the platform: every default of the configuration (as with an
 * empty environment), then `overrides`.
 */
export const platformOptions = (overrides: Partial<PlatformOptions> = {}): PlatformOptions => ({
  ...Effect.runSync(Effect.withConfigProvider(platformConfig, ConfigProvider.fromMap(new Map()))),
  ...overrides
})

export class PlatformConfig
  extends Context.Tag("@trading-platform/core/PlatformConfig")<PlatformConfig, PlatformOptions>()
{
  /** From the environment (or whatever ConfigProvider is installed). */
  static readonly fromEnv = Layer.effect(PlatformConfig, platformConfig)
  /** Given directly, e.g. by a host that embeds the platform. */
  static readonly layer = (options: PlatformOptions) => Layer.succeed(PlatformConfig, options)
}
