extension WebTemplates {
    static let consoleReaders = #"""
    {{<console_layout}}{{$main}}
    {{#content}}
    <h1>{{t.readers}}</h1>
    <form method="get" action="/admin/readers" class="card" role="search">
    <label for="q">{{t.find_reader}}</label><input id="q" name="q" value="{{query}}"><button type="submit">{{t.find}}</button>
    </form>
    {{#searched}}
    <section aria-labelledby="found"><h2 id="found">{{t.readers}}</h2>
    {{^readers}}<p>{{t.no_results}}</p>{{/readers}}
    <table><tbody>{{#readers}}<tr id="reader-{{username}}"><th scope="row">{{username}}</th><td>{{name}}</td><td>{{email}}</td><td class="subscriptions">{{subscriptions}}</td><td>
    <form method="post" action="/admin/readers"><input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="username" value="{{username}}"><input type="hidden" name="action" value="subscribe">
    <label for="edition-{{username}}">{{t.edition}}</label><select id="edition-{{username}}" name="edition">{{#editions}}<option>{{.}}</option>{{/editions}}</select>
    <label for="until-{{username}}">{{t.until}}</label><input id="until-{{username}}" name="until" type="date" required>
    <button type="submit">{{t.set_subscription}}</button></form>
    <form method="post" action="/admin/readers"><input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="username" value="{{username}}"><input type="hidden" name="action" value="password">
    <label for="password-{{username}}">{{t.new_password}}</label><input id="password-{{username}}" name="password" type="password" minlength="8" autocomplete="new-password" required>
    <button type="submit">{{t.reset_password}}</button></form>
    <form method="post" action="/admin/readers"><input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="username" value="{{username}}"><input type="hidden" name="action" value="unlock">
    <button type="submit">{{t.clear_lockout}}</button></form>
    <form method="post" action="/admin/readers"><input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="username" value="{{username}}"><input type="hidden" name="action" value="end_sessions">
    <button type="submit">{{t.end_sessions}}</button></form>
    </td></tr>{{/readers}}</tbody></table>
    </section>
    {{/searched}}
    <section aria-labelledby="add-title"><h2 id="add-title">{{t.add_reader}}</h2>
    <form method="post" action="/admin/readers"><input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="action" value="add">
    <label for="new-username">{{t.username}}</label><input id="new-username" name="username" required>
    <label for="new-name">{{t.name}}</label><input id="new-name" name="name">
    <label for="new-email">{{t.email}}</label><input id="new-email" name="email" type="email">
    <label for="new-password">{{t.password}}</label><input id="new-password" name="password" type="password" minlength="8" autocomplete="new-password" required>
    <button type="submit">{{t.add}}</button>
    </form></section>
    <section aria-labelledby="demo-title"><h2 id="demo-title">{{t.device_demos}}</h2>
    <form method="get" action="/admin/readers">
    <label for="demo-app">{{t.app}}</label><select id="demo-app" name="app">{{#apps}}<option>{{.}}</option>{{/apps}}</select>
    <label for="demo-device">{{t.device}}</label><input id="demo-device" name="device" required>
    <button type="submit">{{t.show}}</button>
    </form>
    {{#demos}}<p>{{t.demos_consumed}}: <strong id="demos-consumed">{{.}}</strong></p>{{/demos}}
    </section>
    {{/content}}
    {{/main}}{{/console_layout}}
    """#

    static let consoleAudit = #"""
    {{<console_layout}}{{$main}}
    {{#content}}
    <h1>{{t.audit}}</h1>
    <table><thead><tr><th scope="col">{{t.when}}</th><th scope="col">{{t.who}}</th><th scope="col">{{t.what}}</th><th scope="col"></th><th scope="col">{{t.before}}</th><th scope="col">{{t.after}}</th></tr></thead>
    <tbody>{{#entries}}<tr><td>{{when}}</td><td>{{who}}</td><td>{{what}}</td><td>{{subject}}</td><td>{{before}}</td><td>{{after}}</td></tr>{{/entries}}</tbody></table>
    {{^entries}}<p>{{t.no_results}}</p>{{/entries}}
    {{/content}}
    {{/main}}{{/console_layout}}
    """#
}
