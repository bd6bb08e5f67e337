package org.holdfast.server.e2e;

import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.Select;

/** Small steps the console tests repeat: filling a form field, choosing an option, reading the session token. */
final class ConsoleForms {
    private ConsoleForms() {
    }

    /** Types {@code text} into the field {@code name} inside the element marked {@code data-test=form}. */
    static void type(ConsoleBrowser b, String form, String name, String text) {
        WebElement field = b.awaitVisible(By.cssSelector("[data-test='" + form + "'] [name='" + name + "']"));
        field.clear();
        field.sendKeys(text);
    }

    /** Chooses the option of value {@code value} in the select {@code name} inside {@code data-test=form}. */
    static void choose(ConsoleBrowser b, String form, String name, String value) {
        new Select(b.awaitVisible(By.cssSelector("[data-test='" + form + "'] select[name='" + name + "']"))).selectByValue(value);
    }

    /** The console session token the page keeps in sessionStorage, or null when logged out. */
    static String sessionToken(ConsoleBrowser b) {
        return (String) ((JavascriptExecutor) b.driver()).executeScript(
                "const s = JSON.parse(sessionStorage.getItem('holdfast.session')); return s ? s.token : null;");
    }
}
