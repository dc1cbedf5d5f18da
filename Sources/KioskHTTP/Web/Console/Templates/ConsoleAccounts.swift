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
    <table><tbody>{{#accounts}}<tr id="{{kind}}-{{username}}"><th scope="row">{{username}}</th><td class="role">{{role}}</td><td>
    {{#editable}}
    <form method="post" action="/admin/accounts"><input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="kind" value="{{kind}}"><input type="hidden" name="username" value="{{username}}"><input type="hidden" name="action" value="password">
    <label for="password-{{kind}}-{{username}}">{{t.new_password}}</label><input id="password-{{kind}}-{{username}}" name="password" type="password" autocomplete="new-password">
    <label for="password2-{{kind}}-{{username}}">{{t.password_again}}</label><input id="password2-{{kind}}-{{username}}" name="password2" type="password" autocomplete="new-password">
    <button type="submit">{{t.reset_password}}</button></form>
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
