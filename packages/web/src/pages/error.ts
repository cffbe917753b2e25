import { html, type SafeHtml } from "../html.js";

/** Error page for humans: status, what happened (escaped) and where to go next. */
export function errorPage(status: number, title: string, detail: string): SafeHtml {
  return html`<h1>${title}</h1>
    <p class="error-detail">${detail}</p>
    <p class="status-code">HTTP ${status}</p>
    <p><a href="/">Back to the proposals</a> · <a href="/search">Search</a></p>`;
}
