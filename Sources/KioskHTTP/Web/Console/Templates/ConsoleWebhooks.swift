extension WebTemplates {
    /// `/admin/webhooks`: a secret made just now (shown once), the endpoints with their actions, the add form.
    static let consoleWebhooks = #"""
    {{<console_layout}}{{$main}}
    {{#content}}
    <h1>{{t.webhooks}}</h1>
    {{#secret}}
    <section class="notice" id="new-secret" aria-labelledby="h-secret"><h2 id="h-secret">{{#rotated}}{{t.secret_rotated}}{{/rotated}}{{^rotated}}{{t.secret_new}}{{/rotated}} {{name}}</h2>
    <p><code id="secret-value">{{value}}</code></p>
    <p>{{t.secret_once}}</p>
    <p>{{t.secret_verify}} <a href="https://www.standardwebhooks.com">Standard Webhooks</a> · <code>docs/events.md</code>, «{{t.secret_verify_section}}».</p>
    </section>
    {{/secret}}
    <section aria-labelledby="h-endpoints"><h2 id="h-endpoints">{{t.endpoints}}</h2>
    {{^hasEndpoints}}<p>{{t.no_results}}</p>{{/hasEndpoints}}
    {{#hasEndpoints}}
    <table><thead><tr><th scope="col">{{t.name}}</th><th scope="col">URL</th><th scope="col">{{t.event_types}}</th>{{#showOwner}}<th scope="col">{{t.owner}}</th>{{/showOwner}}<th scope="col">{{t.source}}</th><th scope="col">{{t.state}}</th><th scope="col">{{t.secret}}</th><th scope="col">{{t.actions}}</th></tr></thead>
    <tbody>
    {{#endpoints}}<tr class="webhook" id="webhook-{{id}}"><th scope="row"><a href="{{detail}}">{{name}}</a></th><td><code>{{url}}</code></td><td class="types">{{types}}</td>{{#showOwner}}<td class="owner">{{owner}}</td>{{/showOwner}}
    <td class="source">{{#fromFile}}{{t.source_file}}{{/fromFile}}{{^fromFile}}{{t.source_console}}{{/fromFile}}</td>
    <td class="state">{{#enabled}}{{t.enabled}}{{/enabled}}{{^enabled}}{{t.disabled}}{{#disabledReason}}: {{.}}{{/disabledReason}}{{/enabled}}{{#failingSince}}<br>{{t.failing_since}} {{.}}{{/failingSince}}</td>
    <td class="secret">{{t.secret_set}}{{#rotating}} · {{t.rotating}}{{/rotating}}</td>
    <td>
    <form method="post" action="/admin/webhooks" class="inline"><input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="id" value="{{id}}">
    {{#enabled}}<button name="action" value="disable">{{t.disable}}</button>{{/enabled}}{{^enabled}}<button name="action" value="enable">{{t.enable}}</button>{{/enabled}}
    <button name="action" value="test">{{t.send_test}}</button>
    {{^fromFile}}{{^rotating}}<button name="action" value="rotate">{{t.rotate_secret}}</button>{{/rotating}}{{#rotating}}<button name="action" value="finish_rotation">{{t.finish_rotation}}</button>{{/rotating}}
    <button name="action" value="delete">{{t.remove}}</button>{{/fromFile}}
    </form>
    {{#fromFile}}<p class="from-file">{{t.webhook_from_file}}</p>{{/fromFile}}
    </td></tr>
    {{/endpoints}}
    </tbody></table>
    {{/hasEndpoints}}
    </section>
    <section aria-labelledby="h-add"><h2 id="h-add">{{t.add_webhook}}</h2>
    <form method="post" action="/admin/webhooks"><input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="action" value="add">
    {{#entered}}
    <p><label for="w-name">{{t.name}}</label><input id="w-name" name="name" value="{{name}}" maxlength="100" required></p>
    <p><label for="w-url">URL</label><input id="w-url" name="url" value="{{url}}" size="50" inputmode="url" required></p>
    {{/entered}}
    <fieldset><legend>{{t.event_types}}</legend>
    {{#types}}<label><input type="checkbox" name="type_{{value}}" value="1"{{#checked}} checked{{/checked}}> <code>{{value}}</code></label> {{/types}}
    <p>{{#everyTypeAllowed}}{{t.types_hint_all}}{{/everyTypeAllowed}}{{^everyTypeAllowed}}{{t.types_hint_choose}}{{/everyTypeAllowed}}</p>
    </fieldset>
    <p>{{t.webhook_add_hint}}</p>
    <button type="submit">{{t.add}}</button>
    </form>
    </section>
    {{/content}}
    {{/main}}{{/console_layout}}
    """#

    /// `/admin/webhook?id=N`: one endpoint and its delivery log, newest try first, with "send again".
    static let consoleWebhook = #"""
    {{<console_layout}}{{$main}}
    {{#content}}
    <p><a href="/admin/webhooks">← {{t.webhooks}}</a></p>
    {{#endpoint}}
    <h1>{{t.webhook}} {{name}}</h1>
    <dl class="grid">
    <div><dt>URL</dt><dd><code id="webhook-url">{{url}}</code></dd></div><div><dt>{{t.event_types}}</dt><dd>{{types}}</dd></div>
    <div><dt>{{t.owner}}</dt><dd>{{owner}}</dd></div><div><dt>{{t.source}}</dt><dd>{{#fromFile}}{{t.source_file}}{{/fromFile}}{{^fromFile}}{{t.source_console}}{{/fromFile}}</dd></div>
    <div><dt>{{t.state}}</dt><dd id="webhook-state">{{#enabled}}{{t.enabled}}{{/enabled}}{{^enabled}}{{t.disabled}}{{#disabledReason}}: {{.}}{{/disabledReason}}{{/enabled}}{{#failingSince}}<br>{{t.failing_since}} {{.}}{{/failingSince}}</dd></div>
    </dl>
    {{^enabled}}<p class="notice">{{t.disabled_waits}}</p>{{/enabled}}
    <form method="post" action="/admin/webhooks" class="inline"><input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="id" value="{{id}}">
    <button name="action" value="test">{{t.send_test}}</button></form>
    {{/endpoint}}
    <section aria-labelledby="h-log"><h2 id="h-log">{{t.delivery_log}}</h2>
    {{^hasAttempts}}<p>{{t.no_results}}</p>{{/hasAttempts}}
    {{#hasAttempts}}
    <table><thead><tr><th scope="col">{{t.when}}</th><th scope="col">{{t.event}}</th><th scope="col">{{t.attempt}}</th><th scope="col">{{t.status}}</th><th scope="col">{{t.latency}}</th><th scope="col">{{t.answer}}</th><th scope="col"></th></tr></thead>
    <tbody>
    {{#attempts}}<tr class="attempt{{#delivered}} delivered{{/delivered}}" data-event="{{publicID}}"><td>{{time}}</td><td><code>{{publicID}}</code> {{type}}</td><td>{{attempt}}</td><td class="status">{{status}}</td><td>{{latency}}</td><td><code class="answer">{{answer}}</code></td>
    <td>{{#sendAgain}}<form method="post" action="/admin/webhooks" class="inline"><input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="id" value="{{endpoint.id}}"><input type="hidden" name="event" value="{{publicID}}"><button name="action" value="send_again" aria-label="{{t.send_again}}: {{publicID}}">{{t.send_again}}</button></form>{{/sendAgain}}</td></tr>
    {{/attempts}}
    </tbody></table>
    {{/hasAttempts}}
    </section>
    {{/content}}
    {{/main}}{{/console_layout}}
    """#
}
