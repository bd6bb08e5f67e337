package org.holdfast.server.e2e;

import org.openqa.selenium.By;
import java.time.Duration;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.Keys;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

/** Small steps the console tests repeat: filling a form field, choosing an option, reading the session token. */
final class ConsoleForms {
    private ConsoleForms() {
    }

    /** Types {@code text} into the field {@code name} inside the element marked {@code data-test=form}. */
    static void type(ConsoleBrowser b, String form, String name, String text) {
        replace(b, b.awaitVisible(By.cssSelector("[data-test='" + form + "'] [name='" + name + "']")), text);
    }

    /**
     * Replaces what {@code field} holds with {@code text} as a user does (select all, type over it),
     * and waits until the field shows exactly {@code text}. Not WebDriver's clear(): it fires no input
     * event, so the page's model keeps the old value, and a re-render meanwhile (a preview's answer
     * arriving on a loaded machine) put it back in front of the typed text.
     */
    static void replace(ConsoleBrowser b, WebElement field, String text) {
        new WebDriverWait(b.driver(), Duration.ofSeconds(30)).until(d -> {
            field.sendKeys(Keys.chord(Keys.CONTROL, "a"), Keys.BACK_SPACE);
            field.sendKeys(text);
            return text.equals(field.getDomProperty("value"));
        });
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
