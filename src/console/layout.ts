import { html, type HtmlValue, type SafeHtml } from './html.js';

/** The console's sections, in navigation order. */
export const SECTIONS = [
  ['sessions', '/sessions', 'Sessions'],
  ['denials', '/denials', 'Denials'],
  ['hooks', '/hooks', 'Hook health'],
  ['replays', '/replays', 'Replays'],
  ['integrity', '/integrity', 'Integrity'],
] as const;

export type Section = (typeof SECTIONS)[number][0];

export interface PageShell {
  title: string;
  section: Section | null;
  body: SafeHtml;
  /** Where the ledger is (shown in the header). */
  ledger?: string;
}

/**
 * The document around every console page. Styles and the one script are files under /assets
 * (the Content-Security-Policy allows nothing inline); the script only draws charts and adds
 * keyboard shortcuts: every page works without it.
 */
export function consolePage(p: PageShell): SafeHtml {
  return document(
    p.title,
    html`<link rel="stylesheet" href="/assets/console.css"><script src="/assets/console.js" defer></script>`,
    html`<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <a class="brand" href="/sessions">hookledger</a>
  <nav aria-label="Sections"><ul>${SECTIONS.map(
    ([key, href, label], k) =>
      html`<li><a href="${href}" accesskey="${k + 1}"${p.section === key ? html` aria-current="page"` : ''}>${label}</a></li>`,
  )}</ul></nav>
  ${p.ledger ? html`<span class="ledger" title="${p.ledger}">${p.ledger}</span>` : ''}
  <form method="post" action="/logout" class="logout"><button type="submit">Log out</button></form>
</header>
<main id="main" tabindex="-1">${p.body}</main>`,
  );
}

/** A complete HTML document. */
export function document(title: string, head: HtmlValue, body: HtmlValue): SafeHtml {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · hookledger</title>
${head}
</head>
<body>
${body}
</body>
</html>
`;
}

/** The login form: the only page shown without the session cookie. */
export function loginPage(options: { error?: string; next?: string }): SafeHtml {
  return document(
    'Log in',
    html`<link rel="stylesheet" href="/assets/console.css">`,
    html`<main id="main" class="login">
  <h1>hookledger console</h1>
  <p>Read-only view of the ledger. Paste the console token (printed by <code>hookledger console</code>, or in the token file next to the ledger).</p>
  <form method="post" action="/login">
    <input type="hidden" name="next" value="${options.next ?? '/sessions'}">
    <label for="token">Token</label>
    <input type="password" id="token" name="token" autocomplete="current-password" required autofocus>
    <button type="submit">Log in</button>
  </form>
  ${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ''}
</main>`,
  );
}

/** An error page body (bad filter, not found). */
export function errorBody(heading: string, message: string): SafeHtml {
  return html`<h1>${heading}</h1><p class="error" role="alert">${message}</p>`;
}
