//! `mccbuild watch --serve ADDR`: the results site over HTTP, updated live. A small HTTP/1.1
//! server on std's TcpListener (one thread per connection; an organizer's browser or a few, not
//! the public internet: it binds to loopback unless told otherwise). `GET /events` is a
//! server-sent-event stream that sends the site's version whenever the results change; each page
//! carries a few lines of script that reload it when the version differs from its own. The pages
//! read the same without JavaScript (they just do not update by themselves).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use mccbuild_scoring::scores::ScoresReport;

#[derive(Default)]
struct Site {
    version: u64,
    pages: HashMap<String, Arc<String>>,
    scores: Arc<String>,
}

type Shared = Arc<(Mutex<Site>, Condvar)>;

pub struct Server {
    addr: SocketAddr,
    shared: Shared,
}

/// `ADDR` as given to `--serve`: `host:port`, or a port alone (on loopback).
pub fn parse_addr(addr: &str) -> String {
    if addr.parse::<u16>().is_ok() {
        format!("127.0.0.1:{addr}")
    } else {
        addr.to_string()
    }
}

impl Server {
    pub fn start(addr: &str) -> std::io::Result<Server> {
        let listener = TcpListener::bind(parse_addr(addr))?;
        let addr = listener.local_addr()?;
        let shared: Shared = Arc::default();
        let accept = shared.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let shared = accept.clone();
                std::thread::spawn(move || {
                    let _ = handle(stream, &shared);
                });
            }
        });
        Ok(Server { addr, shared })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Replaces the site and tells every open page.
    pub fn publish(&self, pages: Vec<(String, String)>, scores: &ScoresReport) {
        let (lock, changed) = &*self.shared;
        let mut site = lock.lock().unwrap_or_else(|e| e.into_inner());
        site.version += 1;
        let version = site.version;
        site.pages = pages
            .into_iter()
            .map(|(name, text)| (name.clone(), Arc::new(live(&name, text, version))))
            .collect();
        site.scores = Arc::new(serde_json::to_string(scores).unwrap_or_default());
        changed.notify_all();
    }
}

/// An HTML page with the script that reloads it when the results change.
fn live(name: &str, text: String, version: u64) -> String {
    if !name.ends_with(".html") {
        return text;
    }
    let script = format!(
        "<script>(function(){{var v=\"{version}\";var s=new EventSource(\"events\");s.onmessage=function(e){{if(e.data!==v){{s.close();location.reload();}}}};}})();</script></body>"
    );
    text.replacen("</body>", &script, 1)
}

fn respond(stream: &mut TcpStream, status: &str, kind: &str, body: &[u8]) -> std::io::Result<()> {
    write!(stream, "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n", body.len())?;
    stream.write_all(body)
}

fn handle(mut stream: TcpStream, shared: &Shared) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
    }
    let mut parts = request.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
    if method != "GET" {
        return respond(
            &mut stream,
            "405 Method Not Allowed",
            "text/plain",
            b"only GET\n",
        );
    }
    let path = target
        .split(['?', '#'])
        .next()
        .unwrap_or("/")
        .trim_start_matches('/');
    let path = if path.is_empty() { "index.html" } else { path };
    let (lock, changed) = &**shared;
    match path {
        "events" => {
            write!(stream, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\nConnection: keep-alive\r\n\r\n")?;
            let mut seen = 0;
            loop {
                let version = {
                    let site = lock.lock().unwrap_or_else(|e| e.into_inner());
                    let (site, _) = changed
                        .wait_timeout_while(site, Duration::from_secs(15), |s| s.version == seen)
                        .unwrap_or_else(|e| e.into_inner());
                    site.version
                };
                if version == seen {
                    stream.write_all(b": keep-alive\n\n")?;
                } else {
                    seen = version;
                    write!(stream, "data: {version}\n\n")?;
                }
                stream.flush()?;
            }
        }
        "scores.json" => {
            let body = lock
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .scores
                .clone();
            respond(&mut stream, "200 OK", "application/json", body.as_bytes())
        }
        _ => {
            let page = lock
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .pages
                .get(path)
                .cloned();
            match page {
                Some(text) => {
                    let kind = if path.ends_with(".css") {
                        "text/css; charset=utf-8"
                    } else {
                        "text/html; charset=utf-8"
                    };
                    respond(&mut stream, "200 OK", kind, text.as_bytes())
                }
                None => respond(
                    &mut stream,
                    "404 Not Found",
                    "text/plain",
                    b"no such page\n",
                ),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_alone_binds_loopback() {
        assert_eq!(parse_addr("8017"), "127.0.0.1:8017");
        assert_eq!(parse_addr("0.0.0.0:80"), "0.0.0.0:80");
    }

    #[test]
    fn pages_get_the_reload_script_other_files_do_not() {
        let page = live("index.html", "<html><body><p>x</p></body></html>".into(), 7);
        assert!(page.contains("var v=\"7\"") && page.ends_with("</body></html>"));
        assert_eq!(live("style.css", "body{}".into(), 7), "body{}");
    }
}
