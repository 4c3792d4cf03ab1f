//! A synthetic but English corpus for `engram bench recall`: sentences shaped like the
//! memories agents write ("The staging deploy failed because the cache migration ran
//! first"), and short queries about them. English words matter for the timing: a model
//! tokenises real words into about one token each, while made-up words split into four or
//! five pieces and would make every embedding look several times slower than it is.

/// A small deterministic generator (xorshift64*) so runs are repeatable for a seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// Roughly Zipf-distributed index in `0..n`: a few items are common, most are rare.
    pub fn zipf(&mut self, n: usize) -> usize {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        ((n as f64).powf(u) - 1.0) as usize % n
    }
    fn pick<'a>(&mut self, words: &[&'a str]) -> &'a str {
        words[self.below(words.len())]
    }
}

const QUALIFIERS: &[&str] = &[
    "staging",
    "production",
    "nightly",
    "legacy",
    "new",
    "shared",
    "local",
    "remote",
    "primary",
    "backup",
    "internal",
    "public",
    "mobile",
    "desktop",
    "billing",
    "search",
    "login",
    "payment",
    "analytics",
    "admin",
    "customer",
    "partner",
    "release",
    "preview",
    "test",
    "default",
    "regional",
    "global",
    "frontend",
    "backend",
    "batch",
    "realtime",
    "audit",
    "export",
    "import",
    "onboarding",
    "checkout",
    "invoice",
    "reporting",
    "metrics",
    "logging",
    "tracing",
    "alerting",
    "storage",
    "network",
    "security",
    "compliance",
    "pricing",
    "inventory",
    "shipping",
];

const NOUNS: &[&str] = &[
    "database",
    "cache",
    "queue",
    "worker",
    "scheduler",
    "migration",
    "schema",
    "index",
    "table",
    "endpoint",
    "service",
    "gateway",
    "proxy",
    "cluster",
    "container",
    "image",
    "pipeline",
    "build",
    "deploy",
    "release",
    "branch",
    "commit",
    "review",
    "test",
    "fixture",
    "benchmark",
    "dashboard",
    "alert",
    "log",
    "trace",
    "metric",
    "token",
    "session",
    "cookie",
    "password",
    "certificate",
    "domain",
    "bucket",
    "volume",
    "snapshot",
    "backup",
    "replica",
    "shard",
    "config",
    "secret",
    "flag",
    "toggle",
    "script",
    "hook",
    "plugin",
    "library",
    "package",
    "dependency",
    "compiler",
    "linter",
    "formatter",
    "editor",
    "terminal",
    "shell",
    "api",
    "client",
    "server",
    "socket",
    "request",
    "response",
    "payload",
    "header",
    "parser",
    "report",
    "model",
    "prompt",
    "embedding",
    "vector",
    "query",
    "filter",
    "page",
    "form",
    "button",
    "layout",
    "theme",
    "font",
    "icon",
    "component",
    "store",
    "router",
    "template",
    "document",
    "invoice",
    "customer",
    "account",
    "tenant",
    "user",
    "team",
    "meeting",
    "deadline",
    "budget",
];

const VERBS: &[&str] = &[
    "uses",
    "needs",
    "replaced",
    "broke",
    "fixed",
    "slowed",
    "rejected",
    "requires",
    "depends on",
    "talks to",
    "writes to",
    "reads from",
    "blocks",
    "caches",
    "validates",
    "retries",
    "times out on",
    "duplicates",
    "corrupted",
    "migrated",
    "deprecated",
    "renamed",
    "moved",
    "split",
    "merged",
    "exposes",
    "hides",
    "overrides",
    "wraps",
    "calls",
];

const REASONS: &[&str] = &[
    "because the old one leaked memory",
    "since the vendor raised prices",
    "after the outage last week",
    "to keep latency under a hundred milliseconds",
    "because tests were flaky",
    "so that reviews are faster",
    "as the team agreed on Monday",
    "because the customer asked for it",
    "to stay within the budget",
    "after the security audit",
    "because it runs everywhere",
    "until the migration is finished",
];

const OPENERS: &[&str] = &[
    "The",
    "Our",
    "We decided that the",
    "Remember that the",
    "Note: the",
    "The user says the",
    "It turned out the",
    "From now on the",
];

const QUESTION: &[&str] = &[
    "what",
    "why",
    "which",
    "how",
    "when did",
    "who owns",
    "what happened to",
];

/// One memory: an opener, a subject, a verb, an object, sometimes a place and a reason.
pub fn sentence(rng: &mut Rng, i: usize) -> String {
    let mut s = format!(
        "{} {} {} {} the {} {}",
        rng.pick(OPENERS),
        QUALIFIERS[rng.zipf(QUALIFIERS.len())],
        NOUNS[rng.zipf(NOUNS.len())],
        rng.pick(VERBS),
        QUALIFIERS[rng.zipf(QUALIFIERS.len())],
        NOUNS[rng.zipf(NOUNS.len())],
    );
    if rng.below(2) == 0 {
        s.push_str(&format!(
            " in the {} {}",
            rng.pick(QUALIFIERS),
            rng.pick(NOUNS)
        ));
    }
    if rng.below(2) == 0 {
        s.push(' ');
        s.push_str(rng.pick(REASONS));
    }
    s.push_str(&format!(" (ticket {i})"));
    s
}

/// A short question with two to four words of the corpus, as an agent would ask.
pub fn query(rng: &mut Rng) -> String {
    let mut q = vec![rng.pick(QUESTION).to_string()];
    for _ in 0..1 + rng.below(3) {
        q.push(QUALIFIERS[rng.zipf(QUALIFIERS.len())].to_string());
        q.push(NOUNS[rng.zipf(NOUNS.len())].to_string());
    }
    q.join(" ")
}
