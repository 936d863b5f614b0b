//! Configuration precedence and layering, one test per rule.

use crate::fake_forge;
use std::collections::HashMap;
use std::path::Path;

use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO};
use forgestate::config::{Config, Origin, Overrides, discover};

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| map.get(k).cloned()
}

/// Overrides naming the configuration file, as `--config FILE` does.
fn named_file(path: impl AsRef<Path>) -> Overrides {
    Overrides {
        config: Some(path.as_ref().to_path_buf()),
        ..Overrides::default()
    }
}

/// `cfg` with `over` as its top layer.
fn with(cfg: &Config, over: &Overrides) -> Config {
    cfg.clone().with_overrides(over.clone())
}

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn flag_beats_env_beats_working_dir_beats_xdg() {
    let d = tempfile::tempdir().unwrap();
    let cwd = d.path();
    write(cwd, "forgestate.toml", "");
    write(cwd, "xdg/forgestate/config.toml", "");
    let xdg = cwd.join("xdg").display().to_string();
    let e = env(&[
        ("FORGESTATE_CONFIG", "from-env.toml"),
        ("XDG_CONFIG_HOME", &xdg),
    ]);
    assert_eq!(
        discover(Some(Path::new("flag.toml")), &e, cwd),
        Origin::Flag("flag.toml".into())
    );
    assert_eq!(discover(None, &e, cwd), Origin::Env("from-env.toml".into()));
    let e = env(&[("XDG_CONFIG_HOME", &xdg)]);
    assert_eq!(
        discover(None, &e, cwd),
        Origin::WorkingDir(cwd.join("forgestate.toml"))
    );
    std::fs::remove_file(cwd.join("forgestate.toml")).unwrap();
    assert_eq!(
        discover(None, &e, cwd),
        Origin::Xdg(cwd.join("xdg/forgestate/config.toml"))
    );
    let home = env(&[("HOME", &cwd.display().to_string())]);
    assert_eq!(
        discover(None, &home, cwd),
        Origin::BuiltIn,
        "~/.config/forgestate/config.toml absent"
    );
    write(cwd, ".config/forgestate/config.toml", "");
    assert_eq!(
        discover(None, &home, cwd),
        Origin::Xdg(cwd.join(".config/forgestate/config.toml"))
    );
}

#[test]
fn user_file_lays_over_built_in_defaults() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "conf/c.toml",
        r#"
        trusted_authors = ["ci-bot"]
        [local]
        dir = "state"
        author = "agent-7"
        [resume]
        default = "restart"
        [resume.agents."pr-self-reviewer"]
        review_posted = "phase_done"
    "#,
    );
    let cfg = Config::load_with(named_file(Path::new("conf/c.toml")), &env(&[]), d.path()).unwrap();
    let map = cfg.resume_map().unwrap();
    assert_eq!(map.point("pr-self-reviewer", "review_posted"), "phase_done");
    assert_eq!(
        map.point("implementation-worker", "subtask_5_complete"),
        "phase_2_continue",
        "defaults kept"
    );
    assert_eq!(map.point("implementation-worker", "nope"), "restart");
    assert_eq!(cfg.file.trusted_authors, ["ci-bot"]);
    let (store, note) = cfg.open_store().unwrap();
    assert!(
        note.unwrap()
            .contains(&d.path().join("conf/state").display().to_string()),
        "relative to the file"
    );
    assert!(format!("{store:?}").contains("agent-7"));
}

#[test]
fn store_flag_beats_a_forge_and_forge_settings_follow_flag_env_file() {
    let d = tempfile::tempdir().unwrap();
    // Named with --config: a file merely found in the working directory may not set the forge.
    write(
        d.path(),
        "ops.toml",
        "[forge]\nurl = \"https://file.example\"\nowner = \"file-owner\"\nrepo = \"r\"\n",
    );
    let token = [(
        "FORGESTATE_TOKEN",
        "0123456789abcdef0123456789abcdef01234567",
    )];
    let flag = d.path().join("ops.toml");
    let cfg = Config::load_with(named_file(&flag), &env(&token), d.path()).unwrap();
    let describe = |over: &Overrides| {
        let (store, note) = with(&cfg, over).open_store().unwrap();
        (format!("{store:?}"), note)
    };
    let (dbg, note) = describe(&Overrides::default());
    assert!(
        dbg.contains("Forge")
            && dbg.contains("https://file.example/")
            && dbg.contains("file-owner"),
        "{dbg}"
    );
    assert_eq!(note, None);
    assert!(
        !dbg.contains("0123456789abcdef"),
        "the token never shows in Debug: {dbg}"
    );
    let (dbg, _) = describe(&Overrides {
        store: Some("dir".into()),
        ..Overrides::default()
    });
    assert!(
        dbg.contains("Local"),
        "--store beats a configured forge: {dbg}"
    );

    let env_cfg = Config::load_with(
        named_file(&flag),
        &env(&[
            token[0],
            ("FORGESTATE_URL", "https://env.example"),
            ("FORGESTATE_OWNER", "env-owner"),
        ]),
        d.path(),
    )
    .unwrap();
    let (store, _) = env_cfg.open_store().unwrap();
    let dbg = format!("{store:?}");
    assert!(
        dbg.contains("https://env.example/") && dbg.contains("env-owner"),
        "env beats file: {dbg}"
    );
    let over = Overrides {
        url: Some("https://flag.example".into()),
        owner: Some("flag-owner".into()),
        ..Overrides::default()
    };
    let dbg = format!("{:?}", with(&env_cfg, &over).open_store().unwrap().0);
    assert!(
        dbg.contains("https://flag.example/") && dbg.contains("flag-owner"),
        "flags beat env: {dbg}"
    );
}

#[test]
fn forge_setup_errors_name_the_missing_piece() {
    let d = tempfile::tempdir().unwrap();
    let url_only = Config::load_with(
        Overrides::default(),
        &env(&[("FORGESTATE_URL", "https://x")]),
        d.path(),
    )
    .unwrap();
    let err = url_only.open_store().unwrap_err().to_string();
    assert!(err.contains("owner") && err.contains("--owner"), "{err}");
    let no_token = Config::load_with(
        Overrides::default(),
        &env(&[
            ("FORGESTATE_URL", "https://x"),
            ("FORGESTATE_OWNER", "o"),
            ("FORGESTATE_REPO", "r"),
        ]),
        d.path(),
    )
    .unwrap();
    let err = no_token.open_store().unwrap_err().to_string();
    assert!(err.contains("FORGESTATE_TOKEN"), "{err}");
    write(d.path(), "tok", "  \n");
    let over = Overrides {
        token_file: Some(d.path().join("tok")),
        ..Overrides::default()
    };
    let err = with(&no_token, &over).open_store().unwrap_err().to_string();
    assert!(err.contains("is empty"), "{err}");
}

#[test]
fn template_overrides_load_from_the_configured_dir() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "t/health.md",
        "[HEALTH] {{ agent }}\nSession: {{ session }}\nTime: {{ time }}\nStatus: {{ status }}\nId: {{ id }}\nVersion: {{ version }}\n\n```json\n{{ metrics_json }}\n```\n",
    );
    write(d.path(), "c.toml", "[format]\ntemplates_dir = \"t\"\n");
    let cfg = Config::load_with(named_file(Path::new("c.toml")), &env(&[]), d.path()).unwrap();
    let r = forgestate::format::Record::health("a", "s", "Active", serde_json::json!({}), None)
        .unwrap();
    let body = cfg.renderer().unwrap().render(&r).unwrap();
    assert!(body.starts_with("[HEALTH] a\nSession: s\n"), "{body}");
    write(
        d.path(),
        "c2.toml",
        "[format]\ntemplates_dir = \"missing\"\n",
    );
    let cfg = Config::load_with(named_file(Path::new("c2.toml")), &env(&[]), d.path()).unwrap();
    assert!(
        cfg.renderer()
            .unwrap_err()
            .to_string()
            .contains("not a directory")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_byte_order_mark_in_the_token_file_or_variable_is_stripped() {
    use forgestate::store::Thread;
    let fake = FakeForge::start().await;
    let d = tempfile::tempdir().unwrap();
    let uri = fake.uri();
    let cache = d.path().join("cache").display().to_string();
    let base = [
        ("FORGESTATE_URL", uri.as_str()),
        ("FORGESTATE_OWNER", OWNER),
        ("FORGESTATE_REPO", REPO),
        ("XDG_CACHE_HOME", cache.as_str()),
    ];
    // As a Windows editor saves it: a BOM, the token, CRLF.
    write(d.path(), "tok", &format!("\u{feff}{BOT_TOKEN}\r\n"));
    let from_file = Config::load_with(Overrides::default(), &env(&base), d.path()).unwrap();
    let over = Overrides {
        token_file: Some(d.path().join("tok")),
        ..Overrides::default()
    };
    let (store, _) = with(&from_file, &over).open_store().unwrap();
    assert_eq!(store.whoami().await.unwrap(), "ca-bot");

    let bom_token = format!("\u{feff}{BOT_TOKEN}");
    let mut vars = base.to_vec();
    vars.push(("FORGESTATE_TOKEN", bom_token.as_str()));
    let from_env = Config::load_with(Overrides::default(), &env(&vars), d.path()).unwrap();
    let (store, _) = from_env.open_store().unwrap();
    assert_eq!(store.whoami().await.unwrap(), "ca-bot");
}

#[test]
fn a_working_directory_config_may_not_move_trust_or_the_token() {
    let d = tempfile::tempdir().unwrap();
    for (text, key) in [
        ("trusted_authors = [\"mallory\"]\n", "trusted_authors"),
        ("redact_keys = []\n", "redact_keys"),
        ("[forge]\nurl = \"http://127.0.0.1:9\"\n", "forge.url"),
        ("[forge]\nowner = \"attacker\"\n", "forge.owner"),
        (
            "[forge]\ntoken_file = \"/etc/passwd\"\n",
            "forge.token_file",
        ),
        (
            "[forge]\nallow_insecure_http = true\n",
            "forge.allow_insecure_http",
        ),
        (
            "[signing]\nrequire_signatures = false\n",
            "signing.require_signatures",
        ),
    ] {
        write(d.path(), "forgestate.toml", text);
        let err = Config::load_with(Overrides::default(), &env(&[]), d.path()).unwrap_err();
        let msg = err.to_string();
        assert_eq!(err.category(), forgestate::Category::Config, "{key}");
        assert!(
            msg.contains(key) && msg.contains("--config"),
            "{key}: {msg}"
        );
        // The same file named explicitly is the operator's choice.
        let named = d.path().join("forgestate.toml");
        Config::load_with(named_file(&named), &env(&[]), d.path()).unwrap();
    }
    // Budgets and templates are fine from the working directory.
    write(
        d.path(),
        "forgestate.toml",
        "[forge]\nretry_budget_secs = 1\n",
    );
    Config::load_with(Overrides::default(), &env(&[]), d.path()).unwrap();
}

#[test]
fn a_working_directory_config_tunes_the_users_config_never_replaces_it() {
    let home = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    write(
        home.path(),
        ".config/forgestate/config.toml",
        "trusted_authors = [\"ops\"]\n[forge]\nurl = \"https://forge.example\"\nowner = \"o\"\n\
         repo = \"r\"\ntoken_file = \"token\"\n",
    );
    // A branch carries a harmless-looking file: it must not drop the operator's forge (which
    // would let the git remote pick where the token goes).
    write(
        cwd.path(),
        "forgestate.toml",
        "[forge]\nretry_budget_secs = 5\n",
    );
    let home_dir = home.path().display().to_string();
    let cfg = Config::load_with(
        Overrides::default(),
        &env(&[("HOME", &home_dir)]),
        cwd.path(),
    )
    .unwrap();
    let forge = cfg.file.forge.clone().unwrap();
    assert_eq!(forge.url.as_deref(), Some("https://forge.example"));
    assert_eq!(
        forge.retry_budget_secs,
        Some(5),
        "the checkout's tuning applies"
    );
    assert_eq!(cfg.file.trusted_authors, ["ops"]);
    assert_eq!(
        forge.token_file,
        Some(home.path().join(".config/forgestate/token")),
        "the user's relative paths stay the user's"
    );
    // And the checkout may not point the local store at state it planted.
    write(cwd.path(), "forgestate.toml", "[local]\ndir = \".fs\"\n");
    let err = Config::load_with(
        Overrides::default(),
        &env(&[("HOME", &home_dir)]),
        cwd.path(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("local.dir"), "{err}");
}

/// One default author rule for every local client: the configured one, else `$USER`, else
/// `$USERNAME`, else `local` ([`forgestate::defaults::local_author`]); `Client::local` and a
/// configured store (`--store` or `[local]`) agree on it.
#[tokio::test(flavor = "multi_thread")]
async fn every_local_client_picks_its_author_by_one_rule() {
    use forgestate::config::StoreSettings;
    use forgestate::defaults::local_author;
    use forgestate::format::Record;

    let none = env(&[]);
    assert_eq!(local_author(None, &none), "local");
    assert_eq!(local_author(None, &env(&[("USERNAME", "win")])), "win");
    assert_eq!(
        local_author(None, &env(&[("USER", ""), ("USERNAME", "win")])),
        "win"
    );
    assert_eq!(
        local_author(Some("agent-7"), &env(&[("USER", "me")])),
        "agent-7"
    );

    let d = tempfile::tempdir().unwrap();
    let author_of = |cfg: &Config, over: &Overrides| match with(cfg, over).settings().unwrap().store
    {
        StoreSettings::Local { author, .. } => author,
        StoreSettings::Forge(_) => panic!("a forge was chosen"),
    };
    let store = Overrides {
        store: Some(d.path().join("store")),
        ..Overrides::default()
    };
    let windows =
        Config::load_with(Overrides::default(), &env(&[("USERNAME", "win")]), d.path()).unwrap();
    assert_eq!(author_of(&windows, &store), "win");
    let nobody = Config::load_with(Overrides::default(), &none, d.path()).unwrap();
    assert_eq!(author_of(&nobody, &store), "local");
    write(d.path(), "named.toml", "[local]\nauthor = \"agent-7\"\n");
    let named = d.path().join("named.toml");
    let configured =
        Config::load_with(named_file(&named), &env(&[("USER", "me")]), d.path()).unwrap();
    assert_eq!(author_of(&configured, &store), "agent-7");

    // Client::local reads the real environment by the same rule, and so does a Config loaded
    // from it: the two write records under the same author.
    let real = |k: &str| std::env::var(k).ok();
    let expected = local_author(None, &real);
    let direct = forgestate::Client::local(d.path().join("direct")).unwrap();
    let record = Record::checkpoint("w", "s", "p", serde_json::json!({})).unwrap();
    direct.save(record).await.posted().unwrap();
    let listed = direct.list(&Default::default(), None).await.unwrap();
    assert_eq!(listed.entries[0].comment.author, expected);
    let from_env = Config::load_with(Overrides::default(), &real, d.path()).unwrap();
    assert_eq!(author_of(&from_env, &store), expected);
}

/// The owner and repository a configuration resolves to.
fn coordinates(cfg: &Config, over: &Overrides) -> Result<(String, String), String> {
    match with(cfg, over).settings().map_err(|e| e.to_string())?.store {
        forgestate::config::StoreSettings::Forge(f) => Ok((f.owner.clone(), f.repo.clone())),
        other => Err(format!("not a forge: {other:?}")),
    }
}

#[test]
fn a_repo_given_as_owner_slash_name_names_the_owner_from_every_place() {
    let d = tempfile::tempdir().unwrap();
    let base = [
        ("FORGESTATE_URL", "https://x.example"),
        (
            "FORGESTATE_TOKEN",
            "0123456789abcdef0123456789abcdef01234567",
        ),
    ];
    let with = |extra: &[(&'static str, &'static str)]| {
        let mut pairs = base.to_vec();
        pairs.extend_from_slice(extra);
        Config::load_with(Overrides::default(), &env(&pairs), d.path()).unwrap()
    };
    let none = Overrides::default();
    // As docs/mcp.md's opencode example sets it: the variable alone.
    let cfg = with(&[("FORGESTATE_REPO", "acme/app")]);
    assert_eq!(
        coordinates(&cfg, &none).unwrap(),
        ("acme".into(), "app".into())
    );
    // An owner given at the same place agrees, or the mistake is named.
    let cfg = with(&[
        ("FORGESTATE_OWNER", "acme"),
        ("FORGESTATE_REPO", "acme/app"),
    ]);
    assert_eq!(
        coordinates(&cfg, &none).unwrap(),
        ("acme".into(), "app".into())
    );
    let cfg = with(&[("FORGESTATE_OWNER", "bob"), ("FORGESTATE_REPO", "acme/app")]);
    let err = coordinates(&cfg, &none).unwrap_err();
    assert!(
        err.contains("$FORGESTATE_REPO") && err.contains("\"acme\"") && err.contains("\"bob\""),
        "{err}"
    );
    // A flag still beats the variable's owner half, as flags beat the environment.
    let cfg = with(&[("FORGESTATE_REPO", "acme/app")]);
    let flag = Overrides {
        owner: Some("flag-owner".into()),
        ..Overrides::default()
    };
    assert_eq!(
        coordinates(&cfg, &flag).unwrap(),
        ("flag-owner".into(), "app".into())
    );
    // Bad shapes are refused with the key named.
    for bad in ["acme/", "/app", "a/b/c", " acme/app", "acme/ app"] {
        let pairs = [base[0], base[1], ("FORGESTATE_REPO", bad)];
        let cfg = Config::load_with(Overrides::default(), &env(&pairs), d.path()).unwrap();
        let err = coordinates(&cfg, &none).unwrap_err();
        assert!(
            err.contains("$FORGESTATE_REPO") && err.contains("OWNER/NAME"),
            "{bad}: {err}"
        );
    }
    // The [forge] table takes the same form.
    write(
        d.path(),
        "ops.toml",
        "[forge]\nurl = \"https://file.example\"\nrepo = \"team/tool\"\n",
    );
    let cfg = Config::load_with(
        named_file(d.path().join("ops.toml")),
        &env(&base[1..]),
        d.path(),
    )
    .unwrap();
    assert_eq!(
        coordinates(&cfg, &none).unwrap(),
        ("team".into(), "tool".into())
    );
    // Without any owner, the message says the OWNER/NAME form works too.
    let cfg = with(&[("FORGESTATE_REPO", "app")]);
    let err = coordinates(&cfg, &none).unwrap_err();
    assert!(err.contains("OWNER/NAME"), "{err}");
}

/// The overrides are the top layer, given once when the configuration is loaded: the file they
/// name is read, and every setting resolved afterwards honours them with no further argument.
/// The wait budget shows the whole order: the overrides (`--wait`), then `$FORGESTATE_WAIT`,
/// then `[forge] wait`, then the 3 s default; the patience the same (60 s by default).
#[test]
fn overrides_are_the_top_layer_over_environment_file_and_defaults() {
    use std::time::Duration;
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "ops.toml",
        "[forge]\nurl = \"https://file.example\"\nowner = \"o\"\nrepo = \"r\"\nwait = \"4s\"\n\
         patience = \"2m\"\n",
    );
    write(
        d.path(),
        "plain.toml",
        "[forge]\nurl = \"https://file.example\"\nowner = \"o\"\nrepo = \"r\"\n",
    );
    let token = (
        "FORGESTATE_TOKEN",
        "0123456789abcdef0123456789abcdef01234567",
    );
    let forge_of = |file: &str, vars: &[(&str, &str)], over: Overrides| {
        let over = Overrides {
            config: Some(d.path().join(file)),
            ..over
        };
        let cfg = Config::load_with(over, &env(vars), d.path()).unwrap();
        match cfg.settings().unwrap().store {
            forgestate::config::StoreSettings::Forge(f) => *f,
            other => panic!("not a forge: {other:?}"),
        }
    };
    let wait_of = |file: &str, vars: &[(&str, &str)], wait: Option<Duration>| {
        forge_of(
            file,
            vars,
            Overrides {
                wait,
                ..Overrides::default()
            },
        )
        .wait
    };
    let with_env = [token, ("FORGESTATE_WAIT", "2s")];
    let ms = Duration::from_millis;
    assert_eq!(wait_of("ops.toml", &with_env, Some(ms(500))), ms(500));
    assert_eq!(wait_of("ops.toml", &with_env, None), ms(2000));
    assert_eq!(wait_of("ops.toml", &[token], None), ms(4000));
    assert_eq!(wait_of("plain.toml", &[token], None), ms(3000));
    let patience_of = |file: &str, vars: &[(&str, &str)], patience: Option<Duration>| {
        let over = Overrides {
            patience,
            ..Overrides::default()
        };
        forge_of(file, vars, over).patience
    };
    let with_env = [token, ("FORGESTATE_PATIENCE", "90s")];
    let secs = Duration::from_secs;
    assert_eq!(patience_of("ops.toml", &with_env, Some(secs(5))), secs(5));
    assert_eq!(patience_of("ops.toml", &with_env, None), secs(90));
    assert_eq!(patience_of("ops.toml", &[token], None), secs(120));
    assert_eq!(patience_of("plain.toml", &[token], None), secs(60));
    let cfg = Config::load_with(
        named_file(d.path().join("plain.toml")),
        &env(&[token, ("FORGESTATE_PATIENCE", "forever")]),
        d.path(),
    )
    .unwrap();
    let Err(refused) = cfg.settings() else {
        panic!("a patience that is not a duration was taken");
    };
    assert!(
        refused.to_string().contains("FORGESTATE_PATIENCE"),
        "{refused}"
    );

    // The store override beats the forge the named file configures, with nothing passed later.
    let over = Overrides {
        store: Some(d.path().join("local")),
        ..named_file(d.path().join("ops.toml"))
    };
    let cfg = Config::load_with(over, &env(&[token]), d.path()).unwrap();
    assert_eq!(cfg.forge_url().as_deref(), Some("https://file.example"));
    let (store, _) = cfg.open_store().unwrap();
    assert!(format!("{store:?}").contains("Local"), "{store:?}");
}

/// What the layers give of the forge's coordinates, for the CLI's git-remote inference: an
/// `OWNER/NAME` repository names the owner, and each layer counts.
#[test]
fn the_layers_say_which_forge_coordinates_they_give() {
    use forgestate::config::ForgeGiven;
    let d = tempfile::tempdir().unwrap();
    let given = |vars: &[(&str, &str)], over: Overrides| {
        Config::load_with(over, &env(vars), d.path())
            .unwrap()
            .forge_given()
    };
    assert_eq!(given(&[], Overrides::default()), ForgeGiven::default());
    assert_eq!(
        given(
            &[("FORGESTATE_REPO", "acme/app"), ("FORGESTATE_TOKEN", "t")],
            Overrides::default()
        ),
        ForgeGiven {
            url: None,
            owner: true,
            repo: true,
            token: true
        }
    );
    let flags = Overrides {
        url: Some("https://f.example".into()),
        repo: Some("app".into()),
        token_file: Some("tok".into()),
        ..Overrides::default()
    };
    assert_eq!(
        given(&[("FORGESTATE_OWNER", "  ")], flags),
        ForgeGiven {
            url: Some("https://f.example".into()),
            owner: false,
            repo: true,
            token: true
        },
        "a blank variable gives nothing"
    );
    write(d.path(), "ops.toml", "[forge]\nowner = \"o\"\n");
    let named = Overrides {
        config: Some(d.path().join("ops.toml")),
        ..Overrides::default()
    };
    assert!(given(&[], named).owner, "the file's [forge] owner");
}
