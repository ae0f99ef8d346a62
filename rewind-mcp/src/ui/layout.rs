//! How every page looks: the frame around its body, and the page of a request refused.

use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use maud::{DOCTYPE, Markup, html};

use crate::paths::{UI_LOGIN_PATH, UI_PATH};

/// A whole page: `body` under the header, with the style embedded.
pub(super) fn page(title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head { meta charset="utf-8"; title { (title) } style { (STYLE) } }
            body { header { h1 { a href=(UI_PATH) { "rewind" } } } main { (body) } }
        }
    }
}

/// The pages' style, embedded so that a page needs no other request.
const STYLE: &str = "body{font:14px system-ui,sans-serif;margin:1rem 2rem;color:#1b1b1b}\
h1{font-size:1.3rem}h2{font-size:1.1rem;margin-top:1.6rem;border-bottom:1px solid #ccc}\
h3{font-size:1rem;margin:.9rem 0 .2rem}table{border-collapse:collapse}th,td{padding:.2rem .6rem;\
text-align:left;border-bottom:1px solid #eee}th{background:#f4f4f4}label{margin-right:.3rem}\
input,button{margin-right:.6rem}.account{float:right}code{font-size:12px}\
form{margin:.4rem 0}pre{background:#f7f7f7;padding:.5rem;overflow:auto}";

/// A refusal: why, and the way to sign in.
pub(super) fn problem(status: StatusCode, why: &str) -> Response {
    let title = match status {
        StatusCode::FORBIDDEN => "Not allowed",
        _ => "Not signed in",
    };
    let body = page(
        title,
        html! { p { (why) } p { a href=(UI_LOGIN_PATH) { "Sign in" } } },
    );
    (status, Html(body.into_string())).into_response()
}
