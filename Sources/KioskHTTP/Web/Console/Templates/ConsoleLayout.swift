extension WebTemplates {
    /// The console's frame: skip link, the operator, navigation by role, sign-out, `{{$main}}`.
    static let consoleLayout = #"""
    <!doctype html>
    <html lang="{{lang}}">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>{{title}} · Kiosk {{t.console}}</title>
    <style>
    *{box-sizing:border-box}body{margin:0;font:15px/1.45 system-ui,sans-serif;color:#1d1d1f;background:#f5f6f8}
    a{color:#0b57d0}a:focus,button:focus,input:focus,select:focus{outline:3px solid #f4b400;outline-offset:2px}
    .skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:#fff;padding:.5rem;z-index:1}
    header{background:#1d2733;color:#fff;padding:.6rem 1rem;display:flex;flex-wrap:wrap;gap:1rem;align-items:center;justify-content:space-between}
    header a{color:#fff}header nav ul{list-style:none;margin:0;padding:0;display:flex;gap:1rem;flex-wrap:wrap}
    header a[aria-current]{font-weight:700;text-decoration:none;border-bottom:2px solid #f4b400}
    header form{display:inline}main{max-width:76rem;margin:0 auto;padding:1rem}
    h1{font-size:1.5rem;margin:.3rem 0 1rem}h2{font-size:1.15rem;margin:1.5rem 0 .5rem}
    section,.card{background:#fff;border:1px solid #dde;border-radius:6px;padding:1rem;margin:0 0 1rem}
    table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #eee;vertical-align:top}
    .grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(16rem,1fr));gap:1rem}
    .notice{background:#fff8e1;border:1px solid #f4b400;padding:.6rem 1rem;border-radius:4px}
    label{display:inline-block;margin:.2rem .5rem .2rem 0}input,select,button{font:inherit;padding:.25rem .5rem}
    button{border:1px solid #99a;border-radius:4px;background:#fff;cursor:pointer}form.inline{display:inline}
    .chart{width:100%;height:auto}code{word-break:break-all;font-size:.8rem}progress{width:100%}
    </style>
    </head>
    <body>
    <a class="skip" href="#main">{{t.skip}}</a>
    <header>
    <strong>Kiosk {{t.console}}</strong>
    {{#frame}}
    <nav aria-label="{{t.console}}"><ul>{{#links}}<li><a href="{{href}}"{{#current}} aria-current="page"{{/current}}>{{label}}</a></li>{{/links}}</ul></nav>
    <p>{{t.signed_in_as}} <strong>{{operatorName}}</strong> ({{role}})
    <form method="post" action="/admin/sign-out"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit">{{t.sign_out}}</button></form></p>
    {{/frame}}
    </header>
    <main id="main" tabindex="-1">
    {{#frame.notice}}<p class="notice" role="alert">{{.}}</p>{{/frame.notice}}
    {{$main}}{{/main}}
    </main>
    </body>
    </html>
    """#

    static let consoleSetup = #"""
    {{<console_layout}}{{$main}}
    {{#content}}
    <section style="max-width:28rem">
    <h1>{{t.setup}}</h1>
    <p>{{t.setup_hint}}</p>
    {{#problem}}<p class="notice" role="alert">{{.}}</p>{{/problem}}
    <form method="post" action="/admin/setup?token={{token}}">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <p><label for="username">{{t.username}}</label><br><input id="username" name="username" autocomplete="username" required autofocus></p>
    <p><label for="password">{{t.password}}</label><br><input id="password" name="password" type="password" autocomplete="new-password" minlength="8" required></p>
    <p><label for="password2">{{t.password_again}}</label><br><input id="password2" name="password2" type="password" autocomplete="new-password" minlength="8" required></p>
    <p><button type="submit">{{t.setup_create}}</button></p>
    </form>
    </section>
    {{/content}}
    {{/main}}{{/console_layout}}
    """#

    static let consoleSignIn = #"""
    {{<console_layout}}{{$main}}
    {{#content}}
    <section style="max-width:24rem">
    <h1>{{t.sign_in}}</h1>
    {{#problem}}<p class="notice" role="alert">{{.}}</p>{{/problem}}
    <form method="post" action="/admin/sign-in">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <p><label for="username">{{t.username}}</label><br><input id="username" name="username" autocomplete="username" required autofocus></p>
    <p><label for="password">{{t.password}}</label><br><input id="password" name="password" type="password" autocomplete="current-password" required></p>
    <p><button type="submit">{{t.sign_in}}</button></p>
    </form>
    </section>
    {{/content}}
    {{/main}}{{/console_layout}}
    """#

    static let consoleDashboard = #"""
    {{<console_layout}}{{$main}}
    {{#content}}
    <h1>{{t.dashboard}}</h1>
    {{#hasWebhookTroubles}}<section class="notice" id="webhook-troubles" aria-labelledby="h-webhook-troubles"><h2 id="h-webhook-troubles">{{t.webhook_troubles}}</h2>
    <ul>{{#webhooks}}<li><a href="{{url}}">{{name}}</a>: {{#disabled}}{{t.disabled}} ({{.}}){{/disabled}}{{^disabled}}{{t.failing_since}} {{failingSince}}{{/disabled}}</li>{{/webhooks}}</ul>
    </section>{{/hasWebhookTroubles}}
    <form method="get" action="/admin" class="card">
    <label for="from">{{t.from}}</label><input id="from" name="from" type="date" value="{{from}}">
    <label for="to">{{t.to}}</label><input id="to" name="to" type="date" value="{{to}}">
    <button type="submit">{{t.show}}</button>
    </form>
    <section aria-labelledby="per-day"><h2 id="per-day">{{t.downloads_per_day}} ({{t.downloads}}: <span id="total">{{total}}</span>)</h2>{{{chart}}}</section>
    <div class="grid">
    <section aria-labelledby="by-app"><h2 id="by-app">{{t.by_app}}</h2><table><tbody>{{#byApp}}<tr><th scope="row">{{name}}</th><td>{{downloads}}</td></tr>{{/byApp}}</tbody></table></section>
    <section aria-labelledby="by-os"><h2 id="by-os">{{t.by_os}}</h2><table><tbody>{{#byOS}}<tr><th scope="row">{{name}}</th><td>{{downloads}}</td></tr>{{/byOS}}</tbody></table></section>
    <section aria-labelledby="top"><h2 id="top">{{t.top_issues}}</h2><table><tbody>{{#topIssues}}<tr><th scope="row">{{name}}</th><td>{{downloads}}</td></tr>{{/topIssues}}</tbody></table></section>
    <section aria-labelledby="devices"><h2 id="devices">{{t.active_devices}}</h2><table><tbody>{{#activeDevices}}<tr><th scope="row">{{name}}</th><td>{{downloads}}</td></tr>{{/activeDevices}}</tbody></table></section>
    <section aria-labelledby="activity"><h2 id="activity">{{t.activity}}</h2><table><tbody>
    <tr><th scope="row">{{t.bundle_builds}}</th><td id="bundle-builds">{{bundleBuilds}}</td><td>{{bundleMegabytes}} MB</td></tr>
    <tr><th scope="row">{{t.sign_in_failures}}</th><td id="sign-in-failures">{{signInFailures}}</td><td></td></tr>
    </tbody></table></section>
    </div>
    <section aria-labelledby="demos"><h2 id="demos">{{t.demos}}</h2>
    <table><thead><tr><th scope="col">{{t.app}}</th><th scope="col">{{t.devices_with_demos}}</th><th scope="col">{{t.demos_used}}</th><th scope="col">{{t.converted}}</th><th scope="col">{{t.conversion}}</th></tr></thead>
    <tbody>{{#demos}}<tr><th scope="row">{{app}}</th><td>{{devices}}</td><td>{{used}}</td><td>{{converted}}</td><td>{{conversion}}</td></tr>{{/demos}}</tbody></table></section>
    {{#store}}
    <section aria-labelledby="store"><h2 id="store">{{t.store_purchases}}</h2>
    <div class="grid">
    <table><tbody>
    <tr><th scope="row">{{t.active_subscriptions}}</th><td id="active-subscriptions">{{activeSubscriptions}}</td></tr>
    <tr><th scope="row">{{t.refunds}}</th><td id="refunds">{{refunds}}</td></tr>
    </tbody></table>
    <table><caption>{{t.revenue}}</caption><thead><tr><th scope="col">{{t.currency}}</th><th scope="col">{{t.payments}}</th><th scope="col">{{t.amount}}</th></tr></thead>
    <tbody>{{#revenue}}<tr id="revenue-{{currency}}"><th scope="row">{{currency}}</th><td>{{payments}}</td><td>{{amount}}</td></tr>{{/revenue}}</tbody></table>
    </div>
    <h3 id="store-days">{{t.store_purchases_per_day}}</h3>
    <table aria-labelledby="store-days"><thead><tr><th scope="col">{{t.day}}</th><th scope="col">{{t.kind_issue}}</th><th scope="col">{{t.kind_credits}}</th><th scope="col">{{t.kind_subscription}}</th><th scope="col">{{t.purchases}}</th></tr></thead>
    <tbody>{{#days}}<tr{{#isTotal}} id="store-total"{{/isTotal}}><th scope="row">{{#isTotal}}Σ{{/isTotal}}{{^isTotal}}{{day}}{{/isTotal}}</th><td>{{issue}}</td><td>{{credits}}</td><td>{{subscription}}</td><td>{{total}}</td></tr>{{/days}}</tbody></table>
    {{^days}}<p>{{t.no_results}}</p>{{/days}}
    <h3 id="demo-purchases">{{t.demo_purchases}}</h3>
    <table aria-labelledby="demo-purchases"><thead><tr><th scope="col">{{t.app}}</th><th scope="col">{{t.devices_with_demos}}</th><th scope="col">{{t.purchased}}</th><th scope="col">{{t.conversion}}</th></tr></thead>
    <tbody>{{#conversions}}<tr><th scope="row">{{app}}</th><td>{{devices}}</td><td>{{purchased}}</td><td>{{conversion}}</td></tr>{{/conversions}}</tbody></table>
    </section>
    {{/store}}
    {{/content}}
    {{/main}}{{/console_layout}}
    """#
}
