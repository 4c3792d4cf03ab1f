//! The redaction table: realistic secrets that must go and realistic engineering text that
//! must stay exactly as written. Prints the figures (caught, false positives) so the rate
//! can be reported: `cargo test -p engram-core --test redact_table -- --nocapture`.
//!
//! Every value here was made up for this table; none is a live credential.

use engram_core::redact::{MARK, redact};

/// (text, the secret in it). The secret must not survive redaction.
const SECRETS: &[(&str, &str)] = &[
    // Quoted assignments inside a string value (the secrets attacker's S5).
    (r#"REDIS_AUTH="Zq8x2LmP0vR""#, "Zq8x2LmP0vR"),
    (
        r#"{"env": "API_TOKEN=\"tkn8d7f6e5d4c3b\""}"#,
        "tkn8d7f6e5d4c3b",
    ),
    (r#"note: 'DB_PASSWORD="hunter2secret"'"#, "hunter2secret"),
    (r#"REDIS_AUTH=\"s3cr3tValue9\""#, "s3cr3tValue9"),
    // Environment and .env assignments.
    ("DATABASE_PASSWORD=Tr0ub4dor&3x", "Tr0ub4dor&3x"),
    ("DB_PASSWORD=hunter2hunter2", "hunter2hunter2"),
    (
        "API_TOKEN=9f8e7d6c5b4a39281706f5e4",
        "9f8e7d6c5b4a39281706f5e4",
    ),
    ("SECRET=wobbly-penguin-42", "wobbly-penguin-42"),
    ("DB_PASS: s3cretPass!", "s3cretPass!"),
    (
        "curl 'https://api.example.com/v1/items?token=ab12cd34ef56'",
        "ab12cd34ef56",
    ),
    ("set secret=qz81-lmn0-plk2 in the job", "qz81-lmn0-plk2"),
    ("export MYSQL_PWD=rootpw2024", "rootpw2024"),
    (
        "{\"password\": \"correcthorsebattery\"}",
        "correcthorsebattery",
    ),
    ("REDIS_PASSWORD=redisPassw0rd", "redisPassw0rd"),
    ("POSTGRES_PASSWORD=pgAdmin#77", "pgAdmin#77"),
    ("SMTP_PASS=mailpass991", "mailpass991"),
    ("JWT_SECRET=ohsosecretvalue", "ohsosecretvalue"),
    ("SESSION_SECRET=\"k3yb0ard cat\"", "k3yb0ard cat"),
    ("GITHUB_TOKEN=abcd1234efgh5678ijkl", "abcd1234efgh5678ijkl"),
    (
        "SENTRY_AUTH_TOKEN=sntrys_4f2a9c81d7e3b6",
        "sntrys_4f2a9c81d7e3b6",
    ),
    ("STRIPE_SECRET=whsec_88aa77bb66cc", "whsec_88aa77bb66cc"),
    (
        "MAILGUN_API_KEY=key-3ax6xnjp29jd6fds4gc373sgvjxteol0",
        "key-3ax6xnjp29jd6fds4gc373sgvjxteol0",
    ),
    (
        "SENDGRID_API_KEY='SG.abcDEF123.ghiJKL456'",
        "SG.abcDEF123.ghiJKL456",
    ),
    (
        "TWILIO_AUTH_TOKEN=0a1b2c3d4e5f60718293a4b5c6d7e8f9",
        "0a1b2c3d4e5f60718293a4b5c6d7e8f9",
    ),
    ("CLIENT_SECRET=Zp9-Lq2_Rt5.Wv8", "Zp9-Lq2_Rt5.Wv8"),
    (
        "OAUTH_CLIENT_SECRET=GOCSPX-1a2B3c4D5e6F7g8H9i0J",
        "GOCSPX-1a2B3c4D5e6F7g8H9i0J",
    ),
    ("ENCRYPTION_KEY=4b6f7a1c9d2e8f30", "4b6f7a1c9d2e8f30"),
    (
        "export AWS_SESSION_TOKEN=FwoGZXIvYXdzEJr//////////wEaDM3example",
        "FwoGZXIvYXdzEJr",
    ),
    (
        "export VAULT_TOKEN=hvs.CAESIJ8example0token1",
        "hvs.CAESIJ8example0token1",
    ),
    (
        "export NPM_AUTH=dXNlcjpwYXNzd29yZA11",
        "dXNlcjpwYXNzd29yZA11",
    ),
    ("ADMIN_PASSWORD=letmein", "letmein"),
    ("RABBITMQ_DEFAULT_PASS=guest123", "guest123"),
    ("MONGO_INITDB_ROOT_PASSWORD=m0ng0r00t", "m0ng0r00t"),
    ("KEYCLOAK_ADMIN_PASSWORD=kc-admin-9", "kc-admin-9"),
    (
        "DJANGO_SECRET_KEY=django-insecure-8h$x2!k@q9",
        "django-insecure-8h$x2!k@q9",
    ),
    (
        "SECRET_KEY_BASE=7d1f0c9e8b2a4d6f3e5c7b9a1d3f5e7c",
        "7d1f0c9e8b2a4d6f3e5c7b9a1d3f5e7c",
    ),
    ("PRIVATE_KEY_PASSPHRASE=blue-moon-1977", "blue-moon-1977"),
    ("LDAP_BIND_PASSWORD=Ld@pB1nd", "Ld@pB1nd"),
    ("set PGPASSWORD=pg_pw_551 before psql", "pg_pw_551"),
    ("MYSQL_ROOT_PASSWORD: \"r00tr00t\"", "r00tr00t"),
    // YAML, TOML, JSON, INI.
    ("password: hunter22", "hunter22"),
    ("  db_password: 'Spring2024!'", "Spring2024!"),
    ("api_key: 51d2c7e9a0b3f4e8d6c1", "51d2c7e9a0b3f4e8d6c1"),
    ("  client_secret: zX9yW8vU7tS6", "zX9yW8vU7tS6"),
    ("token = \"t0k3n-abcdef\"", "t0k3n-abcdef"),
    ("password = \"swordfish\"", "swordfish"),
    (
        "[database]\nuser = \"app\"\npassword = \"app-pass-1\"",
        "app-pass-1",
    ),
    (
        "secret_key = \"f00dbabe1234deadbeef\"",
        "f00dbabe1234deadbeef",
    ),
    (
        "{\"api_key\": \"ak_51HqLyjWDarjtT1zdp7dc\"}",
        "ak_51HqLyjWDarjtT1zdp7dc",
    ),
    ("{\"token\":\"b7c2a9f1e4d3\"}", "b7c2a9f1e4d3"),
    (
        "{\"client_secret\": \"cs-0099-aabb\", \"client_id\": \"web\"}",
        "cs-0099-aabb",
    ),
    ("{ \"auth\": { \"password\": \"p@ssw0rd\" } }", "p@ssw0rd"),
    ("'password': 'qwerty123'", "qwerty123"),
    ("passwd=Admin!234", "Admin!234"),
    ("pwd: 'mySecretPwd'", "mySecretPwd"),
    ("credentials: Zm9vOmJhcjEyMw==", "Zm9vOmJhcjEyMw=="),
    (
        "access_token: ya29.a0AfH6SMBexample123",
        "ya29.a0AfH6SMBexample123",
    ),
    ("refresh_token=1//0gExampleRefresh9", "1//0gExampleRefresh9"),
    ("apiKey: \"k_live_2f9a8b7c\"", "k_live_2f9a8b7c"),
    ("secret: \"blueberry pancakes\"", "blueberry pancakes"),
    (
        "<add key=\"StoragePassword\" value=\"x\"/> password=Azure#2023",
        "Azure#2023",
    ),
    // Code with hard-coded secrets.
    ("let password = \"hunter2!\";", "hunter2!"),
    ("const API_KEY = 'pk_9a8b7c6d5e4f3';", "pk_9a8b7c6d5e4f3"),
    (
        "db.connect(user='app', password='conn-pass-77')",
        "conn-pass-77",
    ),
    (
        "client = Client(token=\"ctok_55aa66bb77cc\")",
        "ctok_55aa66bb77cc",
    ),
    ("mysql -u root --password=R00tPass! app", "R00tPass!"),
    ("redis-cli --pass r3d1s-pw ping", "r3d1s-pw"),
    (
        "docker login --password dckr_pat_Z9y8X7w6 registry",
        "dckr_pat_Z9y8X7w6",
    ),
    (
        "psql \"host=db user=app password=pg-secret-9\"",
        "pg-secret-9",
    ),
    // Prose.
    ("the wifi password is sunflower42", "sunflower42"),
    (
        "The password for admin@example.com is Winter2024!",
        "Winter2024!",
    ),
    ("staging passphrase is 'orange-kite-88'", "orange-kite-88"),
    ("password: Bl4ckC0ffee", "Bl4ckC0ffee"),
    (
        "Remember that the router password was r0uter#1.",
        "r0uter#1",
    ),
    // Provider keys (existing rules).
    (
        "use ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8 for the bot",
        "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    ),
    (
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
    ),
    ("glpat-xY12zW34vU56tS78rQ90", "glpat-xY12zW34vU56tS78rQ90"),
    (
        "sk-ant-api03-Zz9Yy8Xx7Ww6Vv5Uu4Tt3",
        "sk-ant-api03-Zz9Yy8Xx7Ww6Vv5Uu4Tt3",
    ),
    (
        "OPENAI key sk-proj-Qw3rTy5uI7oP9aS1dF3gH5",
        "sk-proj-Qw3rTy5uI7oP9aS1dF3gH5",
    ),
    (
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    ),
    (
        "xoxb-263594206564-2343594206564-FGqddMF8tTn",
        "xoxb-263594206564-2343594206564-FGqddMF8tTn",
    ),
    (
        "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI",
        "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI",
    ),
    (
        "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
        "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
    ),
    (
        "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
        "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    ),
    ("AKIAQWERTYUIOPASDFGH in the logs", "AKIAQWERTYUIOPASDFGH"),
    (
        "Authorization: Bearer 8f7e6d5c4b3a2910fedcba98",
        "8f7e6d5c4b3a2910fedcba98",
    ),
    (
        "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c2VyLTQyIn0.c2lnbmF0dXJlLWhlcmUtb2s",
        "eyJhbGciOiJSUzI1NiJ9",
    ),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1x\n-----END RSA PRIVATE KEY-----",
        "MIIEpAIBAAKCAQEA1x",
    ),
    ("redis://default:r3disPw@cache.internal:6379", "r3disPw"),
    ("amqp://guest:Gu3st!pw@mq:5672/", "Gu3st!pw"),
    // Webhooks.
    (
        "post to https://hooks.slack.com/services/T0123ABCD/B0456EFGH/aBcDeFgHiJkLmNoPqRsTuVwX",
        "aBcDeFgHiJkLmNoPqRsTuVwX",
    ),
    (
        "https://hooks.slack.com/workflows/T01ABC/A02DEF/345678/xyzXYZ123",
        "xyzXYZ123",
    ),
    (
        "alerts go to https://discord.com/api/webhooks/112233445566778899/AbC-dEf_GhI123",
        "AbC-dEf_GhI123",
    ),
    (
        "https://discordapp.com/api/webhooks/998877665544/zzYYxxWW-11",
        "zzYYxxWW-11",
    ),
    (
        "Teams: https://contoso.webhook.office.com/webhookb2/1a2b3c4d@5e6f/IncomingWebhook/77aa88bb/99cc",
        "IncomingWebhook/77aa88bb",
    ),
    (
        "https://outlook.office.com/webhook/abc123-def456/IncomingWebhook/0f0f0f",
        "abc123-def456",
    ),
    // AWS secret keys by shape.
    (
        "the secret is wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLE1 (rotate it)",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLE1",
    ),
    (
        "creds: AKIA... and 9dRf4Gh7Jk2Lm5Np8Qr1St4Uv7Wx0Yz3Ab6Cd9Ef",
        "9dRf4Gh7Jk2Lm5Np8Qr1St4Uv7Wx0Yz3Ab6Cd9Ef",
    ),
    (
        "aws_secret_access_key = Hx7Kp2Qz9Lm4Rt6Wv1Yb3Nc8Sd5Fg0Jh2Kl4Mn6P",
        "Hx7Kp2Qz9Lm4Rt6Wv1Yb3Nc8Sd5Fg0Jh2Kl4Mn6P",
    ),
    // Card numbers (Luhn).
    ("card 4111 1111 1111 1111 exp 12/29", "4111 1111 1111 1111"),
    ("charged 5555-5555-5555-4444 twice", "5555-5555-5555-4444"),
    ("amex 378282246310005 on file", "378282246310005"),
    ("test Visa 4012888888881881", "4012888888881881"),
    ("Discover 6011111111111117", "6011111111111117"),
    ("mastercard 2223003122003222 works", "2223003122003222"),
    ("JCB 3530111333300000", "3530111333300000"),
    // High-entropy strings outside any known shape.
    (
        "the signing value is q7Zr2Kx9Vb4Nm8Lp3Wd6Ht1Yc5Fs0",
        "q7Zr2Kx9Vb4Nm8Lp3Wd6Ht1Yc5Fs0",
    ),
    (
        "paste this: Xk29fLq0ZbR7uVt4MnP8sW3yEc6H",
        "Xk29fLq0ZbR7uVt4MnP8sW3yEc6H",
    ),
    (
        "license 8Hq2Lz5Xr9Vt3Nw7Kb1Mc4Pd6Fs0Gj",
        "8Hq2Lz5Xr9Vt3Nw7Kb1Mc4Pd6Fs0Gj",
    ),
    (
        "cookie value aB3cD5eF7gH9iJ1kL2mN4oP6q",
        "aB3cD5eF7gH9iJ1kL2mN4oP6q",
    ),
    // Session 10: escaped JSON, name/value pairs, headers, numbers, over-long tokens.
    (r#"{\"api_key\": \"Ak9dP2mQ7xLw\"}"#, "Ak9dP2mQ7xLw"),
    (r#"{\"password\": \"esc4pedPw!\"}"#, "esc4pedPw!"),
    (r#""args": "--password \"Pw9xQ2mL7k\"""#, "Pw9xQ2mL7k"),
    (
        "env:\n  - name: DB_PASSWORD\n    value: kubePw0rd77",
        "kubePw0rd77",
    ),
    (
        "env:\n- name: API_TOKEN\n  value: \"tok3nValue88\"",
        "tok3nValue88",
    ),
    (
        r#"[{"name":"DB_PASSWORD","value":"jsonPw0rd55"}]"#,
        "jsonPw0rd55",
    ),
    (
        r#"{"Name": "STRIPE_SECRET", "Value": "whValue123xyz"}"#,
        "whValue123xyz",
    ),
    (
        r#"<add key="DbPassword" value="xmlPw0rd!9"/>"#,
        "xmlPw0rd!9",
    ),
    ("<password>XmlInner8pw</password>", "XmlInner8pw"),
    ("<apiKey>ak77Qm2LzP</apiKey>", "ak77Qm2LzP"),
    (
        "Authorization: Basic dXNlcjpwYXNzd29yZA==",
        "dXNlcjpwYXNzd29yZA==",
    ),
    ("Authorization: Bearer a1b2c3d4e5f6", "a1b2c3d4e5f6"),
    (
        r#"curl -H "Authorization: Bearer Tk8x2Lm9Qp4z" https://api"#,
        "Tk8x2Lm9Qp4z",
    ),
    (
        "use bearer q8W2e4R6t8Y0 for the staging API",
        "q8W2e4R6t8Y0",
    ),
    ("curl -u admin:S3cretPw https://ci.local", "S3cretPw"),
    (r#"{"password": 87654321}"#, "87654321"),
    ("password: 4821", "4821"),
    (r#""pin": 482916"#, "482916"),
    ("npm_abcdefghijklmnopqrstuvwxyz0123456789XYZW89", "XYZW89"),
    (
        "key AIzaSyA1234567890abcdefghijklmnopqrstuvWXYZ89 leaked",
        "WXYZ89",
    ),
    ("AKIAIOSFODNN7EXAMPLEZZ89", "ZZ89"),
    // Session 10, the attacker's retest.
    (
        "we set GITLAB_CI_TOKEN=plainvalueabcxyz",
        "plainvalueabcxyz",
    ),
    (
        "old export GITLAB_CI_TOKEN=plainvalueabcxyz",
        "plainvalueabcxyz",
    ),
    (
        r#"[{"name": "SECRET_KEY", "value": "jsonNvSecr3t99"}]"#,
        "jsonNvSecr3t99",
    ),
    (
        r#"{"value": "revOrder12345", "name": "API_TOKEN"}"#,
        "revOrder12345",
    ),
    (
        r#"<add value="revOrder43!" key="DbPassword"/>"#,
        "revOrder43!",
    ),
    ("redis://:R3disUrlPw@cache:6379/0", "R3disUrlPw"),
    ("Authorization: Bearer x1", "x1"),
    ("authorization=Bearer qq11", "qq11"),
    (
        "docker login -u ci -p D0ckerPw99 registry.local",
        "D0ckerPw99",
    ),
    ("sshpass -p 'SshP4ss' ssh deploy@host", "SshP4ss"),
    (
        "$pw = ConvertTo-SecureString 'PsSecur3Pw' -AsPlainText -Force",
        "PsSecur3Pw",
    ),
    (
        "machine api.example.com login ci password n3tRcPass",
        "n3tRcPass",
    ),
    (
        "admin:$apr1$r31.....$HqJZimcKQFAMYayBlzkrA/",
        "HqJZimcKQFAMYayBlzkrA",
    ),
    ("my PIN is 2468", "2468"),
    ("password: \"quotedY4mlPw!\"", "quotedY4mlPw!"),
    ("password = \"t0mlSecretPw\"", "t0mlSecretPw"),
];

/// Ordinary engineering text: code, configuration, hashes and ids in prose. Must be kept
/// byte for byte.
const NON_SECRETS: &[&str] = &[
    // Session 10: identifiers and generated names that look random, schema keys.
    "TestHandleUserLogin2FAFlowV3 fails on CI",
    "class X509TrustManagerExtendedV2Impl extends Base",
    "arn:aws:lambda:us-east-1:123456789012:function:MyStack-MyFunction3BAA72D1-Xk2LmN9pQr7s",
    "Logical id MyFunctionServiceRoleC7F7A5B9 in the template",
    "ApiGatewayRestApiDeploymentB8F2E1A4C was replaced",
    "pinned QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG on the gateway",
    "bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi",
    "sort_key = created_at_v2",
    "primary_key: order_id_v3",
    "ssh_public_key = ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq8vN2xR7pL4mZ9tW3yB6cF1hJ5dG0sAKq8vN2xR7pL alice@laptop",
    "Bearer authentication is configured in nginx",
    "WWW-Authenticate: Basic realm=\"staging\"",
    "- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      name: db",
    "<password>${DB_PASSWORD}</password>",
    "token: 4096",
    "release notes are pinned at ipfs://QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG",
    "see https://ipfs.io/ipfs/QmT5NvUtoM5nWFfrQdVrFtvGfKFmG7AHE8P34isapyhCxX/readme",
    "ssh_public_key = AAAAC3NzaC1lZDI1NTE5AAAAIGq8vN2xR7pL4mZ9tW3yB6cF1hJ5dG0sAKq8vN2xR7pL",
    // Public encodings that look random (the secrets attacker's false positives).
    r#"<script src="https://cdn.jsdelivr.net/npm/bootstrap@5.3.3/dist/js/bootstrap.bundle.min.js" integrity="sha384-YvpcrYf0tY3lHB60NNkmXc5s9fDVZLESaAA55NDzOxhy9GkcIdslK1eN7N6jIeHz" crossorigin="anonymous"></script>"#,
    r#""integrity": "sha512-3E0gR2kx7QHhtbpm1Y5KqEwt+bNbMZQ1X6TqN5HmZfo1o8eWq2vJpY3cR7uLsT9dKfGhA0bXwV4nCe6iU8aPzQ==","#,
    "github.com/stretchr/testify v1.9.0 h1:HtqpIVDClZ4nwg75+f6Lvsy/wHu+3BoSGCbBAcpTsTg=",
    "golang.org/x/sys v0.21.0/go.mod h1:/VUhepiaJMQUp4+oa/7Zr1D23ma6VTLIYjOOTFZPUcA=",
    r#"const logo = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAYAAAAf8/9hAAAABHNCSVQICAgIfAhkiAAAAAlwSFlzAAALEwAACxMBAJqcGAAAAZ9JREFUOI2Nk79Lw0AUx7";"#,
    "Role: arn:aws:iam::123456789012:role/service-role/AWSLambdaBasicExecutionRole-8f3kDx9Q2",
    "arn:aws:iam::123456789012:role/aws-service-role/ecs.amazonaws.com/AWSServiceRoleForECS",
    "The task role is arn:aws:iam::210987654321:role/ProdEcsTaskExecutionRoleForOrdersApi",
    "wasm integrity sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU= matches the lockfile",
    "We switched from PostgreSQL to SQLite for the local store.",
    "The password policy: at least twelve characters.",
    "password: required",
    "Use https://example.com/path?q=1 for docs",
    "ask-the-team before merging; sk-short",
    "データベースはSQLiteに切り替えた",
    "Fixed in commit 3f9a2c7e1b4d5a6f7e8d9c0b1a2f3e4d5c6b7a89 after review.",
    "git cherry-pick a1b2c3d4 onto release",
    "sha256 of the tarball: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "The memory uid is 01HQZX3K9M2N4P6R8T0V2W4Y6A.",
    "request id 550e8400-e29b-41d4-a716-446655440000 timed out",
    "integrity sha512-Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4==",
    "primary_key = id",
    "sort_key: created_at",
    "foreign_key: user_id",
    "PWD=/home/alice/src/engram",
    "password = os.environ[\"DB_PASSWORD\"]",
    "password: ${{ secrets.DB_PASSWORD }}",
    "DB_PASSWORD=${DB_PASSWORD}",
    "token = get_token()",
    "let token = cfg.token.clone();",
    "pub token: Option<String>,",
    "fn check(password: &str) -> bool {",
    "secret: Vec<u8>,",
    "token: String,",
    "max_tokens: 4096",
    "max_token=2048",
    "token_count: 12",
    "password_min_length = 12",
    "secret_name: my-app-secrets",
    "SSH_KEY=~/.ssh/id_ed25519",
    "TLS_KEY=/etc/ssl/private/server.pem",
    "api_key: null",
    "\"password\": \"\"",
    "password: \"<your password here>\"",
    "token: xxxxxxxx",
    "PASSWORD=********",
    "the token expired, so we refresh it on 401",
    "The secret to fast builds is sccache.",
    "password is required for the admin page",
    "password is stored in the OS keychain",
    "auth: true",
    "tests pass: 42/42",
    "cache_key = f\"{user_id}:{day}\"",
    "partition_key: tenant_id",
    "key: value",
    "[REDACTED] stays as it is",
    "Timestamp 1700000000000 is in November 2023.",
    "Order 1234567890123 shipped.",
    "Call +1 555 123 4567 for the on-call.",
    "The build took 12 minutes on 2024-05-14.",
    "Port 5432 is PostgreSQL, 6379 is Redis.",
    "src/engram-store/src/vault.rs line 812",
    "/usr/lib/x86_64-linux-gnu/libssl.so.3",
    "crates/engram/src/mcp/compat_c.rs",
    "tests::recall_finds_memories_by_synonym_with_model",
    "CandleEmbedderLoadsModelWeights",
    "remember_batch_embeds_all_texts_together",
    "HashMap<String, Vec<MemoryId>>",
    "std::collections::BTreeMap",
    "TransactionBehavior::Immediate",
    "RUST_LOG=engram=debug cargo run",
    "RUST_BACKTRACE=1",
    "NODE_ENV=production",
    "ENGRAM_HOME=/tmp/engram-test",
    "export PATH=$HOME/.cargo/bin:$PATH",
    "DATABASE_URL=sqlite:///var/lib/app.db",
    "LOG_LEVEL: info",
    "replicas: 3",
    "image: postgres:16-alpine",
    "docker run -p 8080:80 nginx:1.25",
    "kubectl get pods -n kube-system",
    "SELECT id, content FROM memories WHERE tier = 'active' LIMIT 10;",
    "CREATE INDEX idx_memories_room ON memories(room);",
    "if (user.password !== confirm.password) return error;",
    "hash = bcrypt.hashpw(password, bcrypt.gensalt())",
    "def login(username, password):",
    "password_hash TEXT NOT NULL",
    "The token bucket refills 10 tokens per second.",
    "JWT tokens are signed with RS256; verify with the JWKS endpoint.",
    "Rotate the API key every 90 days.",
    "The AWS secret key lives in Secrets Manager, never in the repo.",
    "Use the `--token` flag to pass a token from a file.",
    "base64 encodes 3 bytes as 4 characters.",
    "MiniLM-L6-v2 has 384 dimensions.",
    "all-MiniLM-L6-v2 loads in about two seconds",
    "x86_64-unknown-linux-gnu",
    "aarch64-apple-darwin",
    "rustc 1.85.0 (4d91de4e4 2025-02-17)",
    "serde_json = { version = \"1.0\", features = [\"preserve_order\"] }",
    "tokio = { version = \"1\", features = [\"rt-multi-thread\", \"macros\"] }",
    "version = \"0.1.0\"",
    "Docker image digest sha256:4f2b3c1d8e7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c",
    "ETag: \"33a64df551425fcc55e4d42a148795d9f25f89d4\"",
    "The release tag is v2.14.3-rc1.",
    "room engram-store merges into engram",
    "We decided to use WAL mode with synchronous=FULL.",
    "Set ann_threshold = 20000 for large stores.",
    "resolve = false turns off resolution per write",
    "topic_key: architecture/auth-model",
    "Meeting moved to 14:30 on Thursday.",
    "The quick brown fox jumps over the lazy dog.",
    "Ticket PROJ-4821 tracks the flaky test.",
    "Error: connection refused (os error 111)",
    "thread 'main' panicked at src/main.rs:42:5",
    "Latency p50 3.2 ms, p99 18.7 ms over 10000 calls",
    "Coordinates 48.8566, 2.3522 are Paris.",
    "ISBN 978-0-596-52068-7",
    "IPv6 address 2001:0db8:85a3:0000:0000:8a2e:0370:7334",
    "MAC 00:1A:2B:3C:4D:5E",
    "The user's session cookie is HttpOnly and SameSite=Lax.",
    "OAuth2 uses an access token and a refresh token.",
    "Use secret scanning in CI (gitleaks, trufflehog).",
    "The Passkey flow replaces passwords for most users.",
    "bearer tokens must be sent over TLS",
    "Authorization: Bearer <token>",
    "config.password_file = \"/run/secrets/db\"",
    "getPasswordFromVault(vaultClient, 'db/prod')",
    "camelCaseVariableNamesAreFine",
    "SomeVeryLongTypeNameForTheBuilderPattern",
    "test_remember_batch_syncs_once_V2",
];

#[test]
fn secrets_are_caught_and_engineering_text_is_kept() {
    assert!(SECRETS.len() >= 100, "{} secrets", SECRETS.len());
    assert!(
        NON_SECRETS.len() >= 100,
        "{} non-secrets",
        NON_SECRETS.len()
    );
    let missed: Vec<_> = SECRETS
        .iter()
        .filter(|(text, secret)| {
            let (out, fired) = redact(text);
            out.contains(secret) || fired.is_empty() || !out.contains(MARK)
        })
        .map(|(text, _)| (*text, redact(text).0))
        .collect();
    let false_positives: Vec<_> = NON_SECRETS
        .iter()
        .filter(|text| redact(text).0 != **text)
        .map(|text| (*text, redact(text)))
        .collect();
    println!(
        "redaction table: caught {}/{} secrets, {} false positives in {} non-secrets",
        SECRETS.len() - missed.len(),
        SECRETS.len(),
        false_positives.len(),
        NON_SECRETS.len()
    );
    assert!(missed.is_empty(), "missed: {missed:#?}");
    assert!(
        false_positives.is_empty(),
        "false positives: {false_positives:#?}"
    );
}

/// Every line of this workspace's own source and documentation (outside redaction and the
/// test fixtures): ordinary engineering text at scale. Reports the false-positive rate and
/// fails past one line in a thousand.
#[test]
fn false_positive_rate_on_this_workspace() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    let mut stack = vec![root.join("crates")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = entry.path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if p.is_dir() && name != "tests" && name != "data" {
                stack.push(p);
            } else if name.ends_with(".rs") && name != "redact.rs" {
                files.push(p);
            }
        }
    }
    let (mut lines, mut fired) = (0usize, Vec::new());
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for line in text.lines() {
            lines += 1;
            let (out, _) = redact(line);
            if out != line {
                fired.push(format!("{}: {line}", f.display()));
            }
        }
    }
    let rate = fired.len() as f64 / lines as f64;
    println!(
        "workspace text: {} of {lines} lines redacted ({:.3}%) in {} files",
        fired.len(),
        rate * 100.0,
        files.len()
    );
    for f in &fired {
        println!("  {f}");
    }
    assert!(rate <= 0.001, "false-positive rate {rate}");
}
