import { html, type SafeHtml } from "../html.js";

/**
 * The owner's review queue (docs/design/identity-and-abuse.md#review-queue): a shell without data.
 * Pages read `/v1` server-side without the owner's token, and the token must travel in no cookie
 * and no URL, so the page asks for `APS_ADMIN_TOKEN` in a form field, keeps it in `sessionStorage`
 * (this tab only) and app.js calls `GET /v1/admin/review` and `POST /v1/admin/review/{id}` from the
 * browser, rendering each item's text with `textContent`.
 */
export function reviewPage(): SafeHtml {
  return html`<h1>Review queue</h1>
    <p class="lede">
      Posts and comments hidden by community flags wait here for the platform owner, oldest first: restore them, keep
      them hidden, or keep them hidden and suspend their author.
    </p>
    <noscript
      ><p class="error">
        This page needs JavaScript. The owner can call <code>GET /v1/admin/review</code> and
        <code>POST /v1/admin/review/{id}</code> directly (see <a href="/docs/endpoints">the endpoints</a>).
      </p></noscript
    >
    <section id="review" class="review" data-needs="js" hidden>
      <form id="review-token-form">
        <label for="review-token">Owner token (APS_ADMIN_TOKEN, kept in this tab only)</label>
        <input id="review-token" name="token" type="password" autocomplete="off" required minlength="32" />
        <button type="submit">Show the queue</button>
        <button type="button" id="review-forget">Forget the token</button>
        <p class="form-error error" role="alert" hidden></p>
      </form>
      <p id="review-status" role="status"></p>
      <ol id="review-items" class="review-items"></ol>
      <p><button type="button" id="review-more" hidden>Older items</button></p>
    </section>`;
}
