extension WebTemplates {
    static let consoleAccounts = #"""
    {{<console_layout}}{{$main}}
    {{#content}}
    <h1>{{t.accounts}}</h1>
    {{^editable}}<p class="notice">{{t.accounts_from_file}}</p>{{/editable}}
    {{#kinds}}
    <section id="{{kind}}" aria-labelledby="h-{{kind}}">
    <h2 id="h-{{kind}}">{{title}}</h2>
    {{^accounts}}<p>{{t.no_results}}</p>{{/accounts}}
    <table><tbody>{{#accounts}}<tr id="{{kind}}-{{username}}"><th scope="row">{{username}}</th><td class="role">{{role}}{{#scope}}<span class="scope">{{#every}}{{t.every_edition}}{{/every}}{{^every}}{{shown}}{{/every}}</span>{{/scope}}</td><td>
    {{#editable}}
    <form method="post" action="/admin/accounts"><input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="kind" value="{{kind}}"><input type="hidden" name="username" value="{{username}}"><input type="hidden" name="action" value="password">
    <label for="password-{{kind}}-{{username}}">{{t.new_password}}</label><input id="password-{{kind}}-{{username}}" name="password" type="password" autocomplete="new-password">
    <label for="password2-{{kind}}-{{username}}">{{t.password_again}}</label><input id="password2-{{kind}}-{{username}}" name="password2" type="password" autocomplete="new-password">
    <button type="submit">{{t.reset_password}}</button></form>
    {{/editable}}
    {{#editable}}{{#scope}}<form method="post" action="/admin/accounts"><input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="kind" value="publisher"><input type="hidden" name="username" value="{{username}}"><input type="hidden" name="action" value="scope">
    <label for="publications-{{username}}">{{t.scope_publications}}</label><input id="publications-{{username}}" name="publications" value="{{publications}}" inputmode="numeric">
    <label for="editions-{{username}}">{{t.scope_editions}}</label><input id="editions-{{username}}" name="editions" value="{{editions}}" inputmode="numeric">
    <label><input type="checkbox" name="every" value="1"{{#every}} checked{{/every}}> {{t.every_edition}}</label>
    <button type="submit">{{t.set_scope}}</button></form>{{/scope}}{{/editable}}
    {{#isOperator}}<form class="inline" method="post" action="/admin/accounts/sessions"><input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="username" value="{{username}}">
    <button type="submit">{{t.end_sessions}}</button></form>{{/isOperator}}
    {{#editable}}
    {{^isSelf}}
    {{#role}}<form class="inline" method="post" action="/admin/accounts"><input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="kind" value="{{kind}}"><input type="hidden" name="username" value="{{username}}"><input type="hidden" name="action" value="role">
    {{#isEditor}}<button name="role" value="operator">{{t.make_operator}}</button>{{/isEditor}}{{^isEditor}}<button name="role" value="editor">{{t.make_editor}}</button>{{/isEditor}}</form>{{/role}}
    <form class="inline" method="post" action="/admin/accounts"><input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="kind" value="{{kind}}"><input type="hidden" name="username" value="{{username}}"><input type="hidden" name="action" value="remove">
    <button type="submit">{{t.remove}}</button></form>
    {{/isSelf}}
    {{/editable}}
    </td></tr>{{/accounts}}</tbody></table>
    {{#editable}}
    <form method="post" action="/admin/accounts"><input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="kind" value="{{kind}}"><input type="hidden" name="action" value="add">
    <h3>{{t.add_account}}</h3>
    <label for="new-{{kind}}">{{t.username}}</label><input id="new-{{kind}}" name="username" required>
    <label for="new-password-{{kind}}">{{t.password}}</label><input id="new-password-{{kind}}" name="password" type="password" autocomplete="new-password">
    <label for="new-password2-{{kind}}">{{t.password_again}}</label><input id="new-password2-{{kind}}" name="password2" type="password" autocomplete="new-password">
    {{^isOperator}}{{#isPublisher}}<label for="new-publications">{{t.scope_publications}}</label><input id="new-publications" name="publications" inputmode="numeric">
    <label for="new-editions">{{t.scope_editions}}</label><input id="new-editions" name="editions" inputmode="numeric">
    <label><input type="checkbox" name="every" value="1"> {{t.every_edition}}</label>{{/isPublisher}}{{/isOperator}}
    {{#isOperator}}<label for="new-role">{{t.role}}</label><select id="new-role" name="role"><option value="editor">{{t.editor}}</option><option value="operator">{{t.operator}}</option></select>{{/isOperator}}
    <button type="submit">{{t.add}}</button>
    <p>{{t.password_hint}}</p>
    </form>
    {{/editable}}
    </section>
    {{/kinds}}
    {{/content}}
    {{/main}}{{/console_layout}}
    """#
}
