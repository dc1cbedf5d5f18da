extension WebTemplates {
    /// `/admin/purchases`: the search form and the purchases found (newest change first).
    static let consolePurchases = #"""
    {{<console_layout}}{{$main}}
    {{#content}}
    <h1>{{t.purchases}}</h1>
    <form method="get" action="/admin/purchases" class="card" role="search">
    <label for="p-reader">{{t.reader}} ({{t.username}})</label><input id="p-reader" name="reader" value="{{reader}}">
    <label for="p-device">{{t.device}}</label><input id="p-device" name="device" value="{{device}}">
    <label for="p-id">{{t.original_id}}</label><input id="p-id" name="id" value="{{id}}" size="30">
    <label for="p-app">{{t.app}}</label><select id="p-app" name="app">{{#apps}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/apps}}</select>
    <button type="submit">{{t.find}}</button>
    </form>
    <section aria-labelledby="found"><h2 id="found">{{#searched}}{{t.purchases_found}}{{/searched}}{{^searched}}{{t.latest_purchases}}{{/searched}}</h2>
    {{^purchases}}<p>{{t.no_results}}</p>{{/purchases}}
    {{#limited}}<p>{{t.purchases_limited}}</p>{{/limited}}
    {{#hasPurchases}}
    <table><thead><tr><th scope="col">{{t.app}}</th><th scope="col">{{t.store}}</th><th scope="col">{{t.product}}</th><th scope="col">{{t.kind}}</th><th scope="col">{{t.holder}}</th><th scope="col">{{t.state}}</th><th scope="col">{{t.access_end}}</th><th scope="col">{{t.credits_left}}</th><th scope="col">{{t.issues_opened}}</th><th scope="col">{{t.devices}}</th></tr></thead>
    <tbody>
    {{/hasPurchases}}
    {{#purchases}}<tr class="purchase" data-id="{{originalID}}"><td>{{app}}</td><td>{{store}}</td><td><a href="{{url}}">{{product}}</a></td><td>{{kind}}</td><td>{{holder}}</td><td class="{{stateName}}">{{state}}</td><td>{{accessEnd}}</td><td>{{creditsLeft}}</td><td>{{issues}}</td><td>{{devices}}</td></tr>{{/purchases}}
    {{#hasPurchases}}
    </tbody></table>
    {{/hasPurchases}}
    </section>
    {{/content}}
    {{/main}}{{/console_layout}}
    """#

    /// `/admin/purchase?app=…&store=…&id=…`: one purchase, its ledger and notices, and an operator's actions.
    static let consolePurchase = #"""
    {{<console_layout}}{{$main}}
    {{#content}}
    <p><a href="/admin/purchases">← {{t.purchases}}</a></p>
    {{#purchase}}
    <h1>{{t.purchase}} <code id="original-id">{{originalID}}</code></h1>
    <section aria-labelledby="h-summary"><h2 id="h-summary">{{product}}</h2>
    <dl class="grid">
    <div><dt>{{t.app}}</dt><dd>{{app}}</dd></div><div><dt>{{t.store}}</dt><dd>{{store}}</dd></div>
    <div><dt>{{t.kind}}</dt><dd>{{kind}}</dd></div><div><dt>{{t.holder}}</dt><dd id="holder">{{holder}}</dd></div>
    <div><dt>{{t.state}}</dt><dd id="state" class="{{stateName}}">{{state}}</dd></div><div><dt>{{t.access_end}}</dt><dd id="access-end">{{accessEnd}}</dd></div>
    <div><dt>{{t.credits_left}}</dt><dd id="credits-left">{{creditsLeft}}</dd></div><div><dt>{{t.issues_opened}}</dt><dd id="issues-opened">{{issues}}</dd></div>
    <div><dt>{{t.devices}}</dt><dd id="devices">{{devices}}</dd></div>
    </dl>
    {{/purchase}}
    <dl class="grid">
    <div><dt>{{t.environment}}</dt><dd>{{environment}}</dd></div><div><dt>{{t.account_token}}</dt><dd><code>{{accountToken}}</code></dd></div>
    <div><dt>{{t.created}}</dt><dd>{{created}}</dd></div><div><dt>{{t.updated}}</dt><dd>{{updated}}</dd></div>
    </dl>
    {{#revokedByOperator}}<p class="notice" id="revoked-by-operator">{{t.revoked_by_operator}}</p>{{/revokedByOperator}}
    {{#mayAct}}
    <form method="post" action="/admin/purchase" class="inline">
    <input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="app" value="{{purchase.app}}"><input type="hidden" name="store" value="{{purchase.store}}"><input type="hidden" name="id" value="{{purchase.originalID}}">
    {{^revokedByOperator}}<input type="hidden" name="action" value="revoke"><button type="submit">{{t.revoke_purchase}}</button>{{/revokedByOperator}}
    {{#revokedByOperator}}<input type="hidden" name="action" value="restore"><button type="submit">{{t.restore_purchase}}</button>{{/revokedByOperator}}
    </form>
    {{/mayAct}}
    </section>
    <section aria-labelledby="h-devices"><h2 id="h-devices">{{t.devices}}</h2>
    {{^devices}}<p>{{t.no_devices}}</p>{{/devices}}
    <ul>{{#devices}}<li class="device"><code>{{key}}</code>
    {{#mayAct}}{{#releasable}}<form method="post" action="/admin/purchase" class="inline"><input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="app" value="{{purchase.app}}"><input type="hidden" name="store" value="{{purchase.store}}"><input type="hidden" name="id" value="{{purchase.originalID}}"><input type="hidden" name="action" value="release"><input type="hidden" name="device" value="{{key}}"><button type="submit" aria-label="{{t.release_device}}: {{key}}">{{t.release_device}}</button></form>{{/releasable}}{{/mayAct}}
    </li>{{/devices}}</ul>
    </section>
    <section aria-labelledby="h-payments"><h2 id="h-payments">{{t.payments}}</h2>
    {{^payments}}<p>{{t.no_results}}</p>{{/payments}}
    <table><thead><tr><th scope="col">{{t.payment}}</th><th scope="col">{{t.paid_at}}</th><th scope="col">{{t.period}}</th><th scope="col">{{t.price}}</th><th scope="col">{{t.state}}</th></tr></thead>
    <tbody>{{#payments}}<tr class="payment"><td><code>{{id}}</code></td><td>{{paidAt}}</td><td>{{period}}</td><td>{{price}}</td><td>{{#revoked}}{{t.payment_revoked}}{{/revoked}}</td></tr>{{/payments}}</tbody></table>
    </section>
    <section aria-labelledby="h-notices"><h2 id="h-notices">{{t.notices}}</h2>
    {{^notices}}<p>{{t.no_results}}</p>{{/notices}}
    <table><thead><tr><th scope="col">{{t.received}}</th><th scope="col">{{t.notice_type}}</th><th scope="col">{{t.outcome}}</th><th scope="col">{{t.id}}</th></tr></thead>
    <tbody>{{#notices}}<tr class="store-notice"><td>{{received}}</td><td>{{type}}{{#subtype}} · {{subtype}}{{/subtype}}</td><td>{{outcome}}</td><td><code>{{id}}</code></td></tr>{{/notices}}</tbody></table>
    </section>
    {{/content}}
    {{/main}}{{/console_layout}}
    """#
}
