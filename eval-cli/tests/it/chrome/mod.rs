//! A small Chrome DevTools Protocol client for the browser tests: it starts
//! headless Chromium with `--remote-debugging-pipe` (the protocol's JSON
//! messages, each ended by a NUL byte, on the child's file descriptors 3 and
//! 4) and speaks to one page through a flat session. No crate: the pipe needs
//! no WebSocket, and the tests need a dozen commands, not the whole protocol.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long one protocol command may take before the test fails.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// The Chromium to use: `CHROME`, else the first of `chromium`,
/// `chromium-browser`, `google-chrome` on `PATH`.
pub fn find() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CHROME").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
}

/// A running headless Chromium. Killed when dropped.
pub struct Chrome {
    child: Child,
    to: ChildStdin,
    from: Receiver<Value>,
    next_id: u64,
    /// Every event received so far, in order (`method`, `params`, `sessionId`).
    pub events: Vec<Value>,
    log: PathBuf,
}

impl Chrome {
    /// Starts `exe` headless with a fresh profile in `profile` (created; its
    /// `chrome.log` beside it gets Chromium's own output). The flags keep it
    /// off the network: no background requests, updates, sync or QUIC.
    pub fn launch(exe: &Path, profile: &Path) -> Chrome {
        let _ = std::fs::remove_dir_all(profile);
        std::fs::create_dir_all(profile).expect("create the profile directory");
        let log = profile.with_extension("log");
        let log_file = std::fs::File::create(&log).expect("create chrome.log");
        // The shell moves our pipes to the descriptors Chromium reads (3)
        // and writes (4) the protocol on, then becomes Chromium.
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(r#"exec "$0" "$@" 3<&0 4>&1 0</dev/null 1>&2"#)
            .arg(exe)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                "--hide-scrollbars",
                "--window-size=1280,900",
                "--remote-debugging-pipe",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log_file)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", exe.display()));
        let to = child.stdin.take().unwrap();
        let mut reader = BufReader::new(child.stdout.take().unwrap());
        let (tx, from) = channel();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match reader.read_until(0, &mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
                if buf.last() == Some(&0) {
                    buf.pop();
                }
                let Ok(v) = serde_json::from_slice::<Value>(&buf) else {
                    continue;
                };
                if tx.send(v).is_err() {
                    return;
                }
            }
        });
        Chrome {
            child,
            to,
            from,
            next_id: 0,
            events: Vec::new(),
            log,
        }
    }

    /// Moves the events that arrived since the last command into
    /// [`events`](Self::events).
    pub fn drain(&mut self) {
        while let Ok(v) = self.from.try_recv() {
            if v.get("method").is_some() {
                self.events.push(v);
            }
        }
    }

    /// Chromium's own output so far (for failure messages).
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Sends `method` (to `session`, or to the browser) and waits for its
    /// answer; events that arrive meanwhile are kept in [`events`](Self::events).
    pub fn call(
        &mut self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        let mut bytes = serde_json::to_vec(&msg).unwrap();
        bytes.push(0);
        self.to
            .write_all(&bytes)
            .and_then(|_| self.to.flush())
            .map_err(|e| format!("{method}: Chromium's pipe: {e}\n{}", self.log()))?;
        let deadline = Instant::now() + COMMAND_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let v = match self.from.recv_timeout(left) {
                Ok(v) => v,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!("{method}: no answer in {COMMAND_TIMEOUT:?}"));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(format!("{method}: Chromium exited\n{}", self.log()));
                }
            };
            if v["id"] == json!(id) {
                return match v.get("error") {
                    Some(e) => Err(format!("{method}: {e}")),
                    None => Ok(v["result"].clone()),
                };
            }
            if v.get("method").is_some() {
                self.events.push(v);
            }
        }
    }

    /// Opens a new page (tab) and attaches to it with the domains the tests
    /// watch enabled: Page, Runtime (console, exceptions), Log, Network.
    pub fn new_page(&mut self) -> Page<'_> {
        let target = self
            .call(None, "Target.createTarget", json!({"url": "about:blank"}))
            .expect("create a page");
        let target_id = target["targetId"].as_str().unwrap().to_string();
        let attached = self
            .call(
                None,
                "Target.attachToTarget",
                json!({"targetId": target_id, "flatten": true}),
            )
            .expect("attach to the page");
        let session = attached["sessionId"].as_str().unwrap().to_string();
        let mut page = Page {
            chrome: self,
            session,
        };
        for domain in ["Page", "Runtime", "Log", "Network"] {
            page.call(&format!("{domain}.enable"), json!({}));
        }
        page.call("Page.bringToFront", json!({}));
        page
    }
}

impl Drop for Chrome {
    fn drop(&mut self) {
        let _ = self.call(None, "Browser.close", json!({}));
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One page of a [`Chrome`], spoken to through its session.
pub struct Page<'a> {
    pub chrome: &'a mut Chrome,
    session: String,
}

/// What a page load took.
#[derive(Debug, Clone, Copy)]
pub struct Load {
    /// From the navigation command to `body.dataset.ready === "1"` seen by
    /// the test (polled every 10 ms).
    pub wall: Duration,
    /// The page's own clock (`performance.now()`) when `data-ready` was set.
    pub ready_ms: f64,
}

/// Records, in the page itself, when `body.dataset.ready` turns `"1"`.
const READY_WATCH: &str = r#"
new MutationObserver((_, o) => {
  if (document.body && document.body.dataset.ready === "1" && window.__readyAt === undefined) {
    window.__readyAt = performance.now();
    o.disconnect();
  }
}).observe(document, {subtree: true, attributes: true, attributeFilter: ["data-ready"]});
"#;

impl Page<'_> {
    /// A command to this page; panics with Chromium's error.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.chrome
            .call(Some(&session), method, params)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Navigates to `url` and waits until the page says it has rendered
    /// (`document.body.dataset.ready === "1"`); panics on a render error
    /// (`document.body.dataset.error`) or after `timeout`.
    pub fn open(&mut self, url: &str, timeout: Duration) -> Load {
        self.call(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({"source": READY_WATCH}),
        );
        let start = Instant::now();
        let nav = self.call("Page.navigate", json!({"url": url}));
        assert!(
            nav.get("errorText").is_none(),
            "navigating to {url}: {}",
            nav["errorText"]
        );
        loop {
            let state = self.eval(
                "document.body ? [document.body.dataset.ready || '', document.body.dataset.error || ''] : ['', '']",
            );
            if state[0] == "1" {
                let wall = start.elapsed();
                let ready_ms = self.eval("window.__readyAt").as_f64().unwrap_or(f64::NAN);
                return Load { wall, ready_ms };
            }
            assert!(
                state[1] == "",
                "the report says it failed to render: {}",
                state[1]
            );
            assert!(
                start.elapsed() < timeout,
                "{url}: not ready after {timeout:?} (data-ready never became \"1\")"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Evaluates `expression` in the page and returns its value (JSON);
    /// panics when it throws.
    pub fn eval(&mut self, expression: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        );
        if let Some(e) = r.get("exceptionDetails") {
            panic!(
                "evaluating {expression:?} threw: {}",
                e["exception"]["description"]
                    .as_str()
                    .unwrap_or(&e.to_string())
            );
        }
        r["result"]["value"].clone()
    }

    /// The text of the first element matching `selector` (`None` when none).
    pub fn text(&mut self, selector: &str) -> Option<String> {
        let v = self.eval(&format!(
            "(() => {{ const e = document.querySelector({}); return e ? e.textContent : null; }})()",
            json!(selector)
        ));
        v.as_str().map(str::to_string)
    }

    /// How many elements match `selector`.
    pub fn count(&mut self, selector: &str) -> usize {
        self.eval(&format!(
            "document.querySelectorAll({}).length",
            json!(selector)
        ))
        .as_u64()
        .unwrap() as usize
    }

    /// Clicks the centre of the first element matching `selector` with real
    /// mouse events (pressed and released), after scrolling it into view.
    pub fn click(&mut self, selector: &str) {
        let rect = self.eval(&format!(
            "(() => {{ const e = document.querySelector({}); if (!e) return null; \
             e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect(); \
             return [r.left + r.width / 2, r.top + r.height / 2]; }})()",
            json!(selector)
        ));
        assert!(!rect.is_null(), "nothing matches {selector:?} to click");
        let (x, y) = (rect[0].as_f64().unwrap(), rect[1].as_f64().unwrap());
        self.call(
            "Input.dispatchMouseEvent",
            json!({"type": "mouseMoved", "x": x, "y": y}),
        );
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "buttons": 1, "clickCount": 1}),
            );
        }
    }

    /// Chooses `value` in the `<select>` matching `selector`, as a user
    /// would: the value changes, then `input` and `change` fire.
    pub fn select(&mut self, selector: &str, value: &str) {
        let ok = self.eval(&format!(
            "(() => {{ const e = document.querySelector({}); if (!e) return 'missing'; \
             if (![...e.options].some(o => o.value === {v})) return 'no option ' + {v} + ' among ' + [...e.options].map(o => JSON.stringify(o.value)).join(', '); \
             e.value = {v}; e.dispatchEvent(new Event('input', {{bubbles: true}})); \
             e.dispatchEvent(new Event('change', {{bubbles: true}})); return 'ok'; }})()",
            json!(selector),
            v = json!(value)
        ));
        assert_eq!(ok, "ok", "selecting {value:?} in {selector}");
    }

    /// Focuses the field matching `selector`, clears it, and types `text`
    /// (Chromium inserts it as typed text: `input` fires).
    pub fn type_into(&mut self, selector: &str, text: &str) {
        self.eval(&format!(
            "(() => {{ const e = document.querySelector({}); e.focus(); e.select(); }})()",
            json!(selector)
        ));
        if text.is_empty() {
            self.call(
                "Input.dispatchKeyEvent",
                json!({"type": "keyDown", "key": "Backspace", "code": "Backspace", "windowsVirtualKeyCode": 8}),
            );
            self.call(
                "Input.dispatchKeyEvent",
                json!({"type": "keyUp", "key": "Backspace", "code": "Backspace", "windowsVirtualKeyCode": 8}),
            );
        } else {
            self.call("Input.insertText", json!({"text": text}));
        }
    }

    /// Saves a PNG of the viewport (or of the whole page) to `path`.
    pub fn screenshot(&mut self, path: &Path, full_page: bool) {
        use base64::Engine as _;
        let shot = self.call(
            "Page.captureScreenshot",
            json!({"format": "png", "captureBeyondViewport": full_page}),
        );
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap())
            .expect("base64 PNG");
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(path, png).unwrap();
    }

    /// Console errors, uncaught exceptions and error log entries of this
    /// page so far, one line each.
    pub fn errors(&mut self) -> Vec<String> {
        self.chrome.drain();
        self.own_events()
            .filter_map(|e| {
                let p = &e["params"];
                match e["method"].as_str()? {
                    "Runtime.exceptionThrown" => Some(format!(
                        "uncaught: {}",
                        p["exceptionDetails"]["exception"]["description"]
                            .as_str()
                            .or(p["exceptionDetails"]["text"].as_str())
                            .unwrap_or("?")
                    )),
                    "Runtime.consoleAPICalled"
                        if matches!(p["type"].as_str(), Some("error" | "assert")) =>
                    {
                        Some(format!("console.{}: {}", p["type"].as_str()?, p["args"]))
                    }
                    "Log.entryAdded" if p["entry"]["level"] == "error" => Some(format!(
                        "log: {} {}",
                        p["entry"]["text"].as_str().unwrap_or("?"),
                        p["entry"]["url"].as_str().unwrap_or("")
                    )),
                    _ => None,
                }
            })
            .collect()
    }

    /// The URL of every request the page made so far.
    pub fn requests(&mut self) -> Vec<String> {
        self.chrome.drain();
        self.own_events()
            .filter(|e| e["method"] == "Network.requestWillBeSent")
            .map(|e| {
                e["params"]["request"]["url"]
                    .as_str()
                    .unwrap_or("?")
                    .to_string()
            })
            .collect()
    }

    fn own_events(&self) -> impl Iterator<Item = &Value> {
        self.chrome
            .events
            .iter()
            .filter(|e| e["sessionId"] == self.session.as_str())
    }
}

/// `file://` URL of an absolute path.
pub fn file_url(path: &Path) -> String {
    let path = std::fs::canonicalize(path).expect("the report exists");
    let mut url = String::from("file://");
    for b in path.to_str().expect("a UTF-8 path").bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                url.push(b as char)
            }
            _ => url.push_str(&format!("%{b:02X}")),
        }
    }
    url
}
